// Supplies the Date header, which Netty does not add by itself. The contract
// requires an IMF-fixdate (RFC 9110 section 5.6.7) with a two-digit day, which
// DateTimeFormatter.RFC_1123_DATE_TIME does not guarantee, hence the explicit
// pattern. The text is cached for the current second, as servers commonly do.
package stampede.netty;

import io.netty.util.AsciiString;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

final class HttpDate {

    private static final DateTimeFormatter IMF_FIXDATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
                    .withZone(ZoneOffset.UTC);

    private record Stamp(long epochSecond, AsciiString text) {}

    /** Racing threads may both format the same second; each result is correct. */
    private static volatile Stamp current = new Stamp(Long.MIN_VALUE, AsciiString.EMPTY_STRING);

    private HttpDate() {}

    /** The current time as an IMF-fixdate, e.g. {@code Sun, 06 Nov 1994 08:49:37 GMT}. */
    static AsciiString now() {
        long second = System.currentTimeMillis() / 1000;
        Stamp stamp = current;
        if (stamp.epochSecond() != second) {
            stamp = new Stamp(second, AsciiString.of(IMF_FIXDATE.format(Instant.ofEpochSecond(second))));
            current = stamp;
        }
        return stamp.text();
    }
}
