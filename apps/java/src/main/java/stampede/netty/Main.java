// Entry point of the Java reference server for Stampede's benchmark contract
// (apps/CONTRACT.md): binds Netty's NIO transport on 0.0.0.0:$PORT with one
// boss thread and $THREADS worker event loops, and installs a shutdown hook so
// SIGTERM closes the listener and stops every event loop within the
// contract's 5 seconds.
//
// How to run: `mvn -q -B -DskipTests package && PORT=9009 java -jar target/app.jar`
// (see app.toml for the GC, heap and db_pool knobs; DATABASE_URL and
// DATABASE_POOL_SIZE feed the database endpoints, see Database.java).
package stampede.netty;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

public final class Main {

    private Main() {}

    public static void main(String[] args) throws InterruptedException {
        Settings settings;
        Database database;
        try {
            settings = Settings.fromEnv();
            database = new Database(Database.targetFrom(System.getenv()));
        } catch (IllegalArgumentException e) {
            System.err.println("netty: error: " + e.getMessage());
            System.exit(2);
            return;
        }

        EventLoopGroup boss = new NioEventLoopGroup(1);
        // 0 lets Netty pick its default (2 x available processors).
        EventLoopGroup workers = new NioEventLoopGroup(settings.workerThreads());
        try {
            Channel listener = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new HttpInitializer(database))
                    .bind(new InetSocketAddress("0.0.0.0", settings.port()))
                    .sync()
                    .channel();
            Runtime.getRuntime().addShutdownHook(
                    new Thread(() -> stop(listener, boss, workers), "netty-shutdown"));
            int port = ((InetSocketAddress) listener.localAddress()).getPort();
            System.out.println("netty: listening on 0.0.0.0:" + port
                    + " (worker threads: " + threadsLabel(settings) + ")");
            listener.closeFuture().sync();
        } finally {
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
    }

    /** Runs on SIGTERM: no new connections, then stop the loops (at most 2 s each). */
    private static void stop(Channel listener, EventLoopGroup boss, EventLoopGroup workers) {
        listener.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        boss.terminationFuture().awaitUninterruptibly(3, TimeUnit.SECONDS);
        workers.terminationFuture().awaitUninterruptibly(3, TimeUnit.SECONDS);
    }

    private static String threadsLabel(Settings settings) {
        return settings.workerThreads() == 0 ? "netty default" : String.valueOf(settings.workerThreads());
    }
}
