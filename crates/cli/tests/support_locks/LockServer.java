// A Java server (the JDK's com.sun.net.httpserver on a pool of eight
// threads) that serialises every request on one `synchronized` block: the
// handler holds the monitor across a blocking wait of HOLD_US microseconds
// (a call to a slow backend made under a global lock), so the pool's
// threads queue on it while the CPU stays free. HotSpot inflates a
// contended monitor and parks its waiters on a futex. Used by the tests of
// `stampede explain` (explain_locks.rs) as the server whose lock must be
// named.
//
// Usage: PORT=8080 HOLD_US=2000 java -cp <dir> LockServer <marker>

import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;

public class LockServer {
    private static final Object LOCK = new Object();
    private static long x = 88172645463325252L;

    public static void main(String[] args) throws Exception {
        String holdEnv = System.getenv("HOLD_US");
        long holdNs = (holdEnv == null ? 2000 : Long.parseLong(holdEnv)) * 1000;
        int port = Integer.parseInt(System.getenv("PORT"));
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.createContext("/", exchange -> {
            long v;
            synchronized (LOCK) {
                try {
                    Thread.sleep(holdNs / 1_000_000, (int) (holdNs % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                v = x;
            }
            byte[] body = Long.toString(Math.floorMod(v, 10L)).getBytes();
            exchange.getResponseHeaders().set("Content-Type", "text/plain");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(8));
        server.start();
    }
}
