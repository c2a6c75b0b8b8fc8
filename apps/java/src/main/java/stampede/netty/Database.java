// The database side of /db, /queries, /fortunes and /updates (apps/CONTRACT.md):
// a HikariCP pool over the PostgreSQL JDBC driver to DATABASE_URL, sized by
// DATABASE_POOL_SIZE (default 8, the manifest's db_pool knob). JDBC blocks, so
// the work runs on a fixed executor of as many threads as connections, never
// on an event loop; ContractHandler answers on the connection's loop when it
// completes. The pool is made by the first request that needs it, so the
// server starts and serves every other endpoint without a database; any
// database failure becomes Unavailable, answered with 503.
package stampede.netty;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import stampede.netty.Fortunes.Fortune;
import stampede.netty.Worlds.Batch;
import stampede.netty.Worlds.World;

final class Database {

    static final int DEFAULT_POOL_SIZE = 8;
    private static final int WORLD_ROWS = 10_000;
    private static final long CONNECT_TIMEOUT_MS = 5_000;

    private static final String SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = ?";
    private static final String SELECT_FORTUNES = "SELECT id, message FROM fortune";
    /** One statement for the whole batch: the ids and numbers travel as two arrays. */
    private static final String UPDATE_WORLDS = "UPDATE world SET randomnumber = new.randomnumber"
            + " FROM UNNEST(?::int[], ?::int[]) AS new(id, randomnumber) WHERE world.id = new.id";

    /** Why a database endpoint could not answer. */
    static final class Unavailable extends Exception {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Blocking work on one pooled connection. */
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    /** How to reach the database; {@code null} jdbcUrl when DATABASE_URL is unset. */
    record Target(String jdbcUrl, String user, String password, int poolSize) {}

    private final Target target;
    private final ExecutorService executor;
    private HikariDataSource pool; // guarded by this

    Database(Target target) {
        this.target = target;
        AtomicInteger n = new AtomicInteger();
        this.executor = Executors.newFixedThreadPool(target.poolSize(), r -> {
            Thread thread = new Thread(r, "db-" + n.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Reads DATABASE_URL ({@code postgres://user:password@host:port/database}) and
     * DATABASE_POOL_SIZE; a malformed value throws IllegalArgumentException naming it.
     */
    static Target targetFrom(Map<String, String> env) {
        String size = env.getOrDefault("DATABASE_POOL_SIZE", "");
        int poolSize = DEFAULT_POOL_SIZE;
        if (!size.isBlank()) {
            try {
                poolSize = Integer.parseInt(size.trim());
            } catch (NumberFormatException e) {
                poolSize = 0;
            }
            if (poolSize < 1) {
                throw new IllegalArgumentException(
                        "DATABASE_POOL_SIZE=" + size + " is not a positive integer; fix or unset it (8)");
            }
        }
        String url = env.getOrDefault("DATABASE_URL", "");
        if (url.isBlank()) {
            return new Target(null, null, null, poolSize);
        }
        try {
            URI uri = new URI(url);
            String scheme = uri.getScheme();
            if (uri.getHost() == null || !("postgres".equals(scheme) || "postgresql".equals(scheme))) {
                throw new IllegalArgumentException("not postgres://");
            }
            String[] userInfo = uri.getRawUserInfo() == null ? new String[0] : uri.getRawUserInfo().split(":", 2);
            String jdbcUrl = "jdbc:postgresql://" + uri.getHost() + ":" + (uri.getPort() < 0 ? 5432 : uri.getPort())
                    + uri.getRawPath();
            return new Target(jdbcUrl, userInfo.length > 0 ? decode(userInfo[0]) : null,
                    userInfo.length > 1 ? decode(userInfo[1]) : null, poolSize);
        } catch (Exception e) {
            throw new IllegalArgumentException(
                    "DATABASE_URL is not a PostgreSQL URL (postgres://user:password@host:port/database)");
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** Runs {@code work} on a pooled connection on the database executor. */
    <T> CompletableFuture<T> submit(Work<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        executor.execute(() -> {
            try (Connection connection = pool().getConnection()) {
                result.complete(work.run(connection));
            } catch (SQLException | RuntimeException e) {
                result.completeExceptionally(new Unavailable("database: " + e.getMessage(), e));
            } catch (Unavailable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** The pool, made on first use; a failed attempt is retried by the next request. */
    private synchronized HikariDataSource pool() throws Unavailable {
        if (pool == null) {
            if (target.jdbcUrl() == null) {
                throw new Unavailable("no database: DATABASE_URL is unset", null);
            }
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(target.jdbcUrl());
            config.setUsername(target.user());
            config.setPassword(target.password());
            config.setMaximumPoolSize(target.poolSize());
            config.setConnectionTimeout(CONNECT_TIMEOUT_MS);
            try {
                pool = new HikariDataSource(config);
            } catch (RuntimeException e) {
                throw new Unavailable("no database connection: " + e.getMessage(), e);
            }
        }
        return pool;
    }

    static int randomId() {
        return ThreadLocalRandom.current().nextInt(1, WORLD_ROWS + 1);
    }

    /** /db and /queries: {@code count} rows, each its own query by random id. */
    static World[] readWorlds(Connection connection, int count) throws SQLException {
        World[] worlds = new World[count];
        try (PreparedStatement select = connection.prepareStatement(SELECT_WORLD)) {
            for (int i = 0; i < count; i++) {
                select.setInt(1, randomId());
                try (ResultSet row = select.executeQuery()) {
                    row.next();
                    worlds[i] = new World(row.getInt(1), row.getInt(2));
                }
            }
        }
        return worlds;
    }

    /** /fortunes: every row of the fortune table. */
    static List<Fortune> readFortunes(Connection connection) throws SQLException {
        List<Fortune> fortunes = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement(SELECT_FORTUNES);
                ResultSet rows = select.executeQuery()) {
            while (rows.next()) {
                fortunes.add(new Fortune(rows.getInt(1), rows.getString(2)));
            }
        }
        return fortunes;
    }

    /** /updates: {@code count} rows read, each given a new random number, written in one statement. */
    static World[] updateWorlds(Connection connection, int count) throws SQLException {
        World[] worlds = readWorlds(connection, count);
        int[] numbers = new int[count];
        for (int i = 0; i < count; i++) {
            numbers[i] = randomId();
        }
        Batch batch = Worlds.planUpdates(worlds, numbers);
        try (PreparedStatement update = connection.prepareStatement(UPDATE_WORLDS)) {
            Array ids = connection.createArrayOf("int4", batch.ids());
            Array values = connection.createArrayOf("int4", batch.numbers());
            update.setArray(1, ids);
            update.setArray(2, values);
            update.executeUpdate();
        }
        return worlds;
    }
}
