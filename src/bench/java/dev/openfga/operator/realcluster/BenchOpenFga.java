package dev.openfga.operator.realcluster;

import java.nio.file.Path;

/**
 * The real-cluster tier's {@code openfga} binaries and throwaway PostgreSQL for the benchmark
 * ({@code dev.openfga.operator.bench.TuplesBench}): built or taken from the test cache ({@link
 * Binaries}), a server started as {@link Postgres} starts it. Here because both are package-private
 * in the test tier.
 */
public final class BenchOpenFga {
  private BenchOpenFga() {}

  /** The {@code openfga} command of a version pinned by the test tier (v1.8.16, v1.10.0). */
  public static Path openfga(String version) {
    return Binaries.openfga(version)
        .orElseThrow(
            () -> new IllegalArgumentException("no openfga " + version + " pinned in src/test"));
  }

  /** A PostgreSQL on 127.0.0.1 and a free port (initdb into a throwaway folder), until closed. */
  public static final class Pg implements AutoCloseable {
    private final Postgres postgres = Postgres.start();

    /** The major version of the server (e.g. "15"). */
    public String version() {
      return postgres.psql("postgres", "SHOW server_version").strip();
    }

    /**
     * A new database: the owner's URI ({@code openfga migrate}) and the runtime user's (no DDL
     * rights: {@code openfga run}, as in production), each with its password.
     */
    public String[] createDatabase(String prefix) {
      Postgres.Database db = postgres.createDatabase(prefix);
      return new String[] {db.ownerUri(), db.uri(db.runtimeUser())};
    }

    @Override
    public void close() {
      postgres.close();
    }
  }
}
