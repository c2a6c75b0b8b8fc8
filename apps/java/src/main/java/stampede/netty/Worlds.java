// The parts of /queries and /updates that need no database: how many rows a
// request asks for, and which rows an update batch writes. Kept apart from
// Database so they are tested without one.
package stampede.netty;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.TreeMap;

final class Worlds {

    /** The most rows /queries and /updates touch per request. */
    static final int MAX_QUERIES = 500;

    /** One row of the world table, as the endpoints answer it (Jackson names the fields). */
    record World(int id, int randomNumber) {}

    /** The ids and numbers one update statement writes, ids ascending. */
    record Batch(Integer[] ids, Integer[] numbers) {}

    private Worlds() {}

    /**
     * The first {@code queries} parameter of a request target clamped to 1..500; missing, empty
     * or not a decimal integer means 1, a number too big for a long means 500.
     */
    static int queryCount(String uri) {
        List<String> values = new QueryStringDecoder(uri).parameters().get("queries");
        String text = values == null ? "" : values.get(0);
        if (!text.matches("[+-]?[0-9]+")) {
            return 1;
        }
        try {
            return (int) Math.min(Math.max(Long.parseLong(text), 1), MAX_QUERIES);
        } catch (NumberFormatException tooLong) {
            return text.startsWith("-") ? 1 : MAX_QUERIES;
        }
    }

    /**
     * Gives {@code worlds[i]} the number {@code numbers[i]} and returns the batch to write: each
     * id once, ascending (concurrent batches lock rows in one order and cannot deadlock). An id
     * drawn twice keeps its last number, in the table and in every answered copy, so the answer
     * is what a read-back finds.
     */
    static Batch planUpdates(World[] worlds, int[] numbers) {
        TreeMap<Integer, Integer> last = new TreeMap<>();
        for (int i = 0; i < worlds.length; i++) {
            last.put(worlds[i].id(), numbers[i]);
        }
        for (int i = 0; i < worlds.length; i++) {
            worlds[i] = new World(worlds[i].id(), last.get(worlds[i].id()));
        }
        return new Batch(last.keySet().toArray(Integer[]::new), last.values().toArray(Integer[]::new));
    }
}
