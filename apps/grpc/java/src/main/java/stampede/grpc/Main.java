// Stampede's Java gRPC reference server: contracts/grpc/bench.proto served by
// grpc-java on its Netty transport, written the way a Java user would write
// it, so that numbers measured against it describe grpc-java. This file holds
// the lifecycle: environment, server, SIGTERM shutdown; BenchService the
// answers; QuietCancels keeps a load's end (calls its client abandons) from
// printing a stack trace per call.
//
// Run it by hand from apps/grpc/java:
//
//   mvn -q -B -DskipTests package && PORT=9009 java -jar target/app.jar
//
// Environment: PORT (default 9009); THREADS (Netty worker event loops, on the
// transport grpc-java picks: epoll where available, else NIO; unset or empty
// keeps grpc-java's default of one per CPU core, times two); GRPC_EXECUTOR
// (`default`: handlers run on grpc-java's cached thread pool; `direct`: on
// the event loop that read the call, grpc-java's documented fast path for
// handlers that never block). GC and heap are the JVM's flags (app.toml).
package stampede.grpc;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

public final class Main {
    /** How long running calls may finish after SIGTERM (the contract allows 5 s). */
    private static final long SHUTDOWN_GRACE_MS = 3000;

    public static void main(String[] args) throws InterruptedException {
        Server server;
        try {
            server = build(System.getenv()).start();
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("grpc-java: error: " + e.getMessage());
            System.exit(2);
            return;
        }
        // Which transport serves, once at start: grpc-netty-shaded carries Netty's
        // native epoll and falls back to NIO (slower) when it cannot load it.
        System.err.println("grpc-java: listening on port " + server.getPort() + ", transport "
                + (Epoll.isAvailable() ? "epoll" : "nio (epoll unavailable: " + Epoll.unavailabilityCause() + ")")
                + ", executor " + System.getenv().getOrDefault("GRPC_EXECUTOR", "default"));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server), "grpc-shutdown"));
        server.awaitTermination();
    }

    /** A server for the environment `env`, with server reflection (grpc-services), not yet started. */
    static Server build(java.util.Map<String, String> env) {
        QuietCancels.install();
        int port = number(env, "PORT", 9009, 0, 65535, "a TCP port number");
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("0.0.0.0", port));
        int threads = number(env, "THREADS", 0, 1, Integer.MAX_VALUE, "a positive integer");
        if (threads > 0) {
            boolean epoll = Epoll.isAvailable();
            EventLoopGroup boss = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
            EventLoopGroup workers = epoll ? new EpollEventLoopGroup(threads) : new NioEventLoopGroup(threads);
            builder.bossEventLoopGroup(boss).workerEventLoopGroup(workers)
                    .channelType(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class);
        }
        String executor = env.getOrDefault("GRPC_EXECUTOR", "");
        switch (executor) {
            case "", "default" -> { }
            case "direct" -> builder.directExecutor();
            default -> throw new IllegalArgumentException(
                    "GRPC_EXECUTOR=\"" + executor + "\" is unknown (use default or direct)");
        }
        return builder.addService(new BenchService()).addService(ProtoReflectionServiceV1.newInstance()).build();
    }

    /** An integer variable; unset or empty gives `absent`. */
    private static int number(java.util.Map<String, String> env, String name, int absent, int min, int max,
            String what) {
        String value = env.getOrDefault(name, "");
        if (value.isEmpty()) {
            return absent;
        }
        try {
            int n = Integer.parseInt(value);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Falls through to the error below.
        }
        throw new IllegalArgumentException(name + "=\"" + value + "\" is not " + what);
    }

    private static void stop(Server server) {
        server.shutdown();
        try {
            if (!server.awaitTermination(SHUTDOWN_GRACE_MS, TimeUnit.MILLISECONDS)) {
                server.shutdownNow().awaitTermination(1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
