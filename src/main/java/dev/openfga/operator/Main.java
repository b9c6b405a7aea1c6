package dev.openfga.operator;

public final class Main {
  public static void main(String[] args) {}
}
