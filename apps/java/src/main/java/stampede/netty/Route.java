// Maps a request path to one of the contract's endpoints and its path
// integer. The rules live here, in one place: fixed paths match exactly, a
// parameterised path has exactly one non-empty segment after its prefix
// (otherwise 404), and that segment must be a contract integer within the
// endpoint's range (otherwise 400).
package stampede.netty;

/** The outcome of routing a path: an endpoint, or why there is none, plus its integer. */
record Route(Endpoint endpoint, int arg) {

    /** The contract's endpoints, plus the two ways a path can fail to name one. */
    enum Endpoint {
        PLAINTEXT("/plaintext", 0),
        JSON("/json", 0),
        VALUES("/values/", Integer.MAX_VALUE),
        COUNT("/api/count/", 100_000),
        FIB("/api/fib/", 10_000),
        CPU("/cpu/", 10_000_000),
        LOCK("/lock/", 10_000_000),
        ALLOC("/alloc/", 65_536),
        SLEEP("/sleep/", 10_000),
        DB("/db", 0),
        QUERIES("/queries", 0),
        FORTUNES("/fortunes", 0),
        UPDATES("/updates", 0),
        /** No endpoint has this path: 404. */
        NOT_FOUND("", 0),
        /** The path names an endpoint but its integer is malformed or out of range: 400. */
        BAD_INTEGER("", 0);

        final String path;
        final int max;

        Endpoint(String path, int max) {
            this.path = path;
            this.max = max;
        }

        boolean takesInteger() {
            return path.endsWith("/");
        }
    }

    private static final Route NOT_FOUND = new Route(Endpoint.NOT_FOUND, 0);
    private static final Route BAD_INTEGER = new Route(Endpoint.BAD_INTEGER, 0);
    private static final Endpoint[] ROUTABLE = {
        Endpoint.PLAINTEXT, Endpoint.JSON, Endpoint.VALUES, Endpoint.COUNT, Endpoint.FIB,
        Endpoint.CPU, Endpoint.LOCK, Endpoint.ALLOC, Endpoint.SLEEP,
        Endpoint.DB, Endpoint.QUERIES, Endpoint.FORTUNES, Endpoint.UPDATES,
    };

    /**
     * Routes a request target; the query string is ignored, except by /queries and /updates,
     * whose integer is the row count it asks for.
     */
    static Route of(String uri) {
        int query = uri.indexOf('?');
        String path = query < 0 ? uri : uri.substring(0, query);
        for (Endpoint endpoint : ROUTABLE) {
            if (!endpoint.takesInteger()) {
                if (path.equals(endpoint.path)) {
                    boolean counted = endpoint == Endpoint.QUERIES || endpoint == Endpoint.UPDATES;
                    return new Route(endpoint, counted ? Worlds.queryCount(uri) : 0);
                }
            } else if (path.startsWith(endpoint.path)) {
                String segment = path.substring(endpoint.path.length());
                if (segment.isEmpty() || segment.indexOf('/') >= 0) {
                    return NOT_FOUND;
                }
                int arg = PathInt.parse(segment, endpoint.max);
                return arg == PathInt.INVALID ? BAD_INTEGER : new Route(endpoint, arg);
            }
        }
        return NOT_FOUND;
    }
}
