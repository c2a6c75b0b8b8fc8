// Unit tests for /fortunes' page without a database: every message escaped,
// the request-time row added, rows sorted by message in code-point order.
// Run with `mvn -q -B test` in apps/java.
package stampede.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import stampede.netty.Fortunes.Fortune;

class FortunesTest {

    @Test
    void fortunesAreEscapedSortedAndJoinedByTheAddedOne() {
        String page = Fortunes.render(List.of(
                new Fortune(12, "フレームワークのベンチマーク"),
                new Fortune(1, "fortune: No such file or directory"),
                new Fortune(11, "<script>alert(\"x & 'y'\");</script>"),
                new Fortune(4, "A bad random number generator"),
                new Fortune(13, "\uD83D\uDE00 (U+1F600, a surrogate pair in UTF-16)"),
                new Fortune(14, "\uFF01 (U+FF01, above every surrogate)")));
        assertTrue(page.startsWith("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"
                + "<tr><th>id</th><th>message</th></tr>"), page);
        assertTrue(page.endsWith("</table></body></html>"), page);
        assertFalse(page.contains("<script>"), page);
        assertTrue(page.contains("&lt;script&gt;alert(&quot;x &amp; &#39;y&#39;&quot;);&lt;/script&gt;"), page);
        List<String> ids = Arrays.stream(page.split("<tr><td>")).skip(1).map(row -> row.split("<")[0]).toList();
        // '<' sorts before capitals, capitals before lower case, ASCII before
        // kana, U+FF01 before U+1F600 (code-point order, not UTF-16's).
        assertEquals(List.of("11", "4", "0", "1", "12", "14", "13"), ids);
        assertTrue(page.contains("<td>フレームワークのベンチマーク</td>"), page);
    }
}
