package dev.openfga.operator.openfga;

/** A store as the OpenFGA API returns it: its id, its name, and when it was created (RFC 3339). */
public record Store(String id, String name, String createdAt) {}
