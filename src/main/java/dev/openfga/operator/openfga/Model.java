package dev.openfga.operator.openfga;

import com.fasterxml.jackson.databind.JsonNode;

/** An authorization model: its id and its JSON (schema_version, type_definitions, conditions). */
public record Model(String id, JsonNode json) {}
