// Parses the integers in request paths exactly as apps/CONTRACT.md requires:
// ASCII digits only, decimal, leading zeros allowed, and anything else (a
// sign, a letter, a space, a value above the endpoint's maximum, a value too
// big for 64 bits) rejected. Integer.parseInt would accept "+1" and "-0",
// which the contract answers with 400, hence this small parser.
package stampede.netty;

final class PathInt {

    /** Returned for text that is not a contract integer within range. */
    static final int INVALID = -1;

    private PathInt() {}

    /**
     * Returns the value of {@code text} if it is one or more ASCII digits whose value is at most
     * {@code max}, otherwise {@link #INVALID}. Stops at the first digit past {@code max}, so no
     * length of input can overflow.
     */
    static int parse(String text, int max) {
        if (text.isEmpty()) {
            return INVALID;
        }
        long value = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return INVALID;
            }
            value = value * 10 + (c - '0');
            if (value > max) {
                return INVALID;
            }
        }
        return (int) value;
    }
}
