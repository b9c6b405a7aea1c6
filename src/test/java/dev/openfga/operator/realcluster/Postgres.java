package dev.openfga.operator.realcluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real PostgreSQL (Debian's package) on 127.0.0.1 and a free port, with a throwaway data folder.
 * Password authentication over TCP (so a wrong password fails as in production), trust only on the
 * harness's own Unix socket. Run as the {@code postgres} user when the tests run as root.
 */
final class Postgres implements AutoCloseable {
  private static final AtomicInteger DATABASES = new AtomicInteger();

  private final Path bin;
  private final Path data;
  private final Path socketDir;
  private final int port;
  private ChildProcess server;

  /** A database with its two users: the owner (DDL rights) and a runtime user without them. */
  record Database(String name, String owner, String runtimeUser, String password, int port) {

    /** A connection URI as OpenFGA takes it, for the user (with the password in it). */
    String uri(String user) {
      return "postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable"
          .formatted(user, password, port, name);
    }

    /** The owner's URI: what {@code openfga migrate} needs. */
    String ownerUri() {
      return uri(owner);
    }
  }

  private Postgres(Path bin, Path data, Path socketDir, int port) {
    this.bin = bin;
    this.data = data;
    this.socketDir = socketDir;
    this.port = port;
  }

  /** initdb into a new folder and start the server. */
  static Postgres start() {
    Path bin = findBin();
    try {
      // under /tmp itself: the postgres user must be able to reach it
      Path base = Files.createTempDirectory(Path.of("/tmp"), "openfga-operator-pg-");
      Path data = base.resolve("data");
      Path socketDir = base.resolve("socket");
      Files.createDirectories(socketDir);
      Postgres postgres = new Postgres(bin, data, socketDir, ControlPlane.freePort());
      if (isRoot()) {
        ChildProcess.run(
            Duration.ofSeconds(30), "chown", "-R", "postgres:postgres", base.toString());
      }
      ChildProcess.run(
          Duration.ofMinutes(2),
          base,
          postgres.asPostgres(
              bin.resolve("initdb").toString(),
              "-D",
              data.toString(),
              "-U",
              "postgres",
              "--auth-local=trust",
              "--auth-host=scram-sha-256",
              "--no-sync",
              "--encoding=UTF8",
              "--locale=C"),
          Map.of());
      postgres.startServer();
      return postgres;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  int port() {
    return port;
  }

  /**
   * A new database owned by a new user (who can migrate it), and a runtime user who can read and
   * write the tables the owner creates but cannot change the schema.
   */
  Database createDatabase(String prefix) {
    String name = prefix.replaceAll("[^a-z0-9_]", "_") + "_" + DATABASES.incrementAndGet();
    Database db = new Database(name, name + "_owner", name + "_runtime", "pw-" + name, port);
    // one statement a call: CREATE DATABASE cannot run inside psql's implicit transaction
    psql("postgres", "CREATE ROLE %s LOGIN PASSWORD '%s'".formatted(db.owner(), db.password()));
    psql(
        "postgres",
        "CREATE ROLE %s LOGIN PASSWORD '%s'".formatted(db.runtimeUser(), db.password()));
    psql("postgres", "CREATE DATABASE %s OWNER %s".formatted(db.name(), db.owner()));
    psql(
        db.name(),
        """
        REVOKE CREATE ON SCHEMA public FROM PUBLIC;
        GRANT USAGE ON SCHEMA public TO %2$s;
        ALTER DEFAULT PRIVILEGES FOR ROLE %1$s IN SCHEMA public
          GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %2$s;
        """
            .formatted(db.owner(), db.runtimeUser()));
    return db;
  }

  /** The schema revision goose recorded (0 when {@code openfga migrate} never ran). */
  long schemaRevision(Database db) {
    String exists =
        psql(db.name(), "SELECT count(*) FROM pg_tables WHERE tablename = 'goose_db_version'");
    if (exists.strip().equals("0")) {
      return 0;
    }
    String out =
        psql(
            db.name(),
            "SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied");
    return Long.parseLong(out.strip());
  }

  /** Runs SQL as the superuser over the Unix socket; returns the unaligned, tuples-only output. */
  String psql(String database, String sql) {
    List<String> command = psqlCommand(database, sql, "-t", "-A");
    return ChildProcess.run(Duration.ofSeconds(30), socketDir, command, Map.of());
  }

  /** psql as the superuser over the harness's Unix socket, stopping at the first error. */
  private List<String> psqlCommand(String database, String sql, String... options) {
    List<String> psql = new ArrayList<>(List.of(bin.resolve("psql").toString(), "-X", "-q"));
    psql.addAll(List.of(options));
    psql.addAll(
        List.of(
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            socketDir.toString(),
            "-p",
            String.valueOf(port),
            "-U",
            "postgres",
            "-d",
            database,
            "-c",
            sql));
    return asPostgres(psql.toArray(String[]::new));
  }

  /** A table lock held by a session of its own until closed. */
  final class Lock implements AutoCloseable {
    private final String application;
    private final ChildProcess session;

    private Lock(String application, ChildProcess session) {
      this.application = application;
      this.session = session;
    }

    @Override
    public void close() {
      psql(
          "postgres",
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '"
              + application
              + "'");
      session.close();
    }
  }

  /**
   * Locks {@code table} of the database (ACCESS EXCLUSIVE) in a session of its own, so whatever
   * needs the table waits, until the lock is closed; returns once the lock is held.
   */
  Lock lockTable(Database db, String table) {
    String application = "test-lock-" + DATABASES.incrementAndGet();
    List<String> command =
        psqlCommand(
            db.name(),
            "BEGIN; LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600);");
    ChildProcess session =
        ChildProcess.start(
            application,
            command,
            Map.of("PATH", "/usr/bin:/bin", "PGAPPNAME", application),
            socketDir,
            data.getParent().resolve(application + ".log"));
    Lock lock = new Lock(application, session);
    Instant deadline = Instant.now().plusSeconds(30);
    String sleeping =
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '"
            + application
            + "' AND wait_event = 'PgSleep'";
    while (!psql("postgres", sleeping).strip().equals("1")) {
      if (!session.isAlive() || Instant.now().isAfter(deadline)) {
        lock.close();
        throw new IllegalStateException("could not lock " + table + ":\n" + session.log());
      }
      ControlPlane.sleep(Duration.ofMillis(100));
    }
    return lock;
  }

  /** Stops the server (fast shutdown: open connections are closed), as in a database outage. */
  void stop() {
    if (server != null) {
      // SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for every client to leave
      ChildProcess.run(Duration.ofSeconds(5), "kill", "-INT", String.valueOf(server.pid()));
      if (server.waitFor(Duration.ofSeconds(30)) < 0) {
        server.kill();
      }
      server = null;
    }
  }

  /** Starts it again on the same port and data. */
  void restart() {
    stop();
    startServer();
  }

  boolean isRunning() {
    return server != null && server.isAlive();
  }

  private void startServer() {
    server =
        ChildProcess.start(
            "postgres",
            asPostgres(
                bin.resolve("postgres").toString(),
                "-D",
                data.toString(),
                "-p",
                String.valueOf(port),
                "-k",
                socketDir.toString(),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
                // a killed client's backend that waits for a lock ends within a second instead of
                // living on (and deadlocking with the next migrate's CREATE INDEX CONCURRENTLY)
                "-c",
                "client_connection_check_interval=1000"),
            Map.of("PATH", "/usr/bin:/bin", "LC_ALL", "C"),
            socketDir,
            data.getParent().resolve("postgres.log"));
    Instant deadline = Instant.now().plusSeconds(60);
    while (true) {
      try {
        psql("postgres", "SELECT 1");
        return;
      } catch (IllegalStateException notYet) {
        if (!server.isAlive() || Instant.now().isAfter(deadline)) {
          throw new IllegalStateException(
              "PostgreSQL did not start:\n" + ControlPlane.tail(server.log()), notYet);
        }
        ControlPlane.sleep(Duration.ofMillis(100));
      }
    }
  }

  private List<String> asPostgres(String... command) {
    List<String> all = new ArrayList<>();
    if (isRoot()) {
      all.addAll(List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"));
    }
    all.addAll(List.of(command));
    return all;
  }

  private static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  /** The newest {@code /usr/lib/postgresql/<major>/bin} with a server in it. */
  private static Path findBin() {
    Path root = Path.of("/usr/lib/postgresql");
    try (var versions = Files.list(root)) {
      return versions
          .map(v -> v.resolve("bin"))
          .filter(b -> Files.isExecutable(b.resolve("postgres")))
          .max((a, b) -> Integer.compare(major(a), major(b)))
          .orElseThrow(() -> new IllegalStateException("no PostgreSQL server in " + root));
    } catch (IOException e) {
      throw new IllegalStateException(
          "PostgreSQL is not installed (apt-get install postgresql): " + e.getMessage(), e);
    }
  }

  private static int major(Path bin) {
    try {
      return Integer.parseInt(bin.getParent().getFileName().toString());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  @Override
  public void close() {
    stop();
    ChildProcess.run(Duration.ofSeconds(60), "rm", "-rf", data.getParent().toString());
  }
}
