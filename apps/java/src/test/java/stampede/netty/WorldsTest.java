// Unit tests for what /queries and /updates decide without a database: the
// row count read from the query string and the batch an update writes.
// Run with `mvn -q -B test` in apps/java.
package stampede.netty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;
import stampede.netty.Worlds.Batch;
import stampede.netty.Worlds.World;

class WorldsTest {

    @Test
    void queryCountIsClampedTo1Through500() {
        Map<String, Integer> cases = Map.ofEntries(
                Map.entry("/queries", 1),
                Map.entry("/queries?queries=", 1),
                Map.entry("/queries?queries=foo", 1),
                Map.entry("/queries?queries=3x", 1),
                Map.entry("/queries?queries=-4", 1),
                Map.entry("/queries?queries=0", 1),
                Map.entry("/queries?queries=3", 3),
                Map.entry("/queries?queries=007", 7),
                Map.entry("/queries?queries=500", 500),
                Map.entry("/queries?queries=501", 500),
                Map.entry("/queries?queries=" + "9".repeat(30), 500),
                Map.entry("/queries?other=9&queries=20", 20),
                Map.entry("/queries?myqueries=20", 1));
        cases.forEach((uri, expected) -> assertEquals(expected, Worlds.queryCount(uri), uri));
    }

    @Test
    void anIdDrawnTwiceIsWrittenOnceWithItsLastNumber() {
        World[] worlds = {new World(9, 1), new World(2, 1), new World(9, 1)};
        Batch batch = Worlds.planUpdates(worlds, new int[] {10, 20, 30});
        assertArrayEquals(new Integer[] {2, 9}, batch.ids());
        assertArrayEquals(new Integer[] {20, 30}, batch.numbers());
        assertArrayEquals(new World[] {new World(9, 30), new World(2, 20), new World(9, 30)}, worlds);
    }

    @Test
    void databaseTargetComesFromTheEnvironment() {
        Database.Target target = Database.targetFrom(Map.of(
                "DATABASE_URL", "postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:55432/hello_world",
                "DATABASE_POOL_SIZE", "4"));
        assertEquals(new Database.Target("jdbc:postgresql://127.0.0.1:55432/hello_world", "benchmarkdbuser",
                "benchmarkdbpass", 4), target);
        assertEquals(new Database.Target(null, null, null, 8), Database.targetFrom(Map.of()));
        for (Map<String, String> bad : java.util.List.of(Map.of("DATABASE_POOL_SIZE", "0"),
                Map.of("DATABASE_URL", "mysql://h/db"), Map.of("DATABASE_URL", "not a url"))) {
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> Database.targetFrom(bad), bad.toString());
        }
    }
}
