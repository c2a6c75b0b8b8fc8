// Reads the server's settings from the environment, as apps/CONTRACT.md
// specifies for every reference server: PORT (default 9009) and THREADS
// (worker event loops; unset or empty means Netty's default). A bad value
// stops the server at start with a message naming the variable, rather than
// silently benchmarking a configuration nobody asked for.
package stampede.netty;

/** The environment-derived configuration; {@code workerThreads == 0} means Netty's default. */
record Settings(int port, int workerThreads) {

    static final int DEFAULT_PORT = 9009;

    static Settings fromEnv() {
        int port = readInt("PORT", DEFAULT_PORT, 0, 65535); // 0: any free port
        int threads = readInt("THREADS", 0, 1, 4096);
        return new Settings(port, threads);
    }

    private static int readInt(String name, int fallback, int min, int max) {
        String raw = System.getenv(name);
        if (raw == null || raw.isBlank()) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(raw.trim());
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException ignored) {
            // fall through to the error below
        }
        throw new IllegalArgumentException(
                name + "=" + raw + " is not an integer in " + min + ".." + max + "; fix or unset it");
    }
}
