// /fortunes' page: the rows read from the database plus the one added at
// request time, sorted by message and rendered through a mustache.java
// template (src/main/resources/fortunes.mustache), whose {{message}} is
// HTML-escaped, so the <script> row never comes back as markup.
package stampede.netty;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

final class Fortunes {

    static final String ADDED_MESSAGE = "Additional fortune added at request time.";

    /** One row of the fortune table; mustache reads the fields by name. */
    record Fortune(int id, String message) {}

    /** Compiled once; a compiled Mustache is thread-safe. */
    private static final Mustache TEMPLATE = new DefaultMustacheFactory().compile("fortunes.mustache");

    private Fortunes() {}

    static String render(List<Fortune> rows) {
        List<Fortune> fortunes = new ArrayList<>(rows);
        fortunes.add(new Fortune(0, ADDED_MESSAGE));
        fortunes.sort((a, b) -> byCodePoint(a.message(), b.message()));
        StringWriter out = new StringWriter();
        TEMPLATE.execute(out, Map.of("fortunes", fortunes));
        return out.toString();
    }

    /**
     * The contract's order: code points (the UTF-8 bytes' order). String.compareTo compares
     * UTF-16 code units, which puts U+10000 and above before U+E000..U+FFFF.
     */
    static int byCodePoint(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
