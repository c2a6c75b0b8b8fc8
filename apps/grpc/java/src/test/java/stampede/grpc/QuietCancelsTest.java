// QuietCancels both ways: the record grpc-java logs for replies a closed
// stream could not send is dropped and every other record kept; and, for
// real, Stream calls whose client goes away with replies still queued (the
// client read one of 100,000) print no stack trace, while the filter saw the
// records it is there to drop (so the test knows the case happened).
package stampede.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Filter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import stampede.grpc.bench.v1.BenchGrpc;
import stampede.grpc.bench.v1.Reply;
import stampede.grpc.bench.v1.StreamRequest;

class QuietCancelsTest {
    private static LogRecord streamError(Http2Error code) {
        LogRecord record = new LogRecord(Level.WARNING, "Stream Error");
        record.setThrown(Http2Exception.streamError(3, code, "Stream closed before write could take place"));
        return record;
    }

    @Test
    void onlyRepliesAClosedStreamCouldNotSendAreDropped() throws Exception {
        Main.build(Map.of("PORT", "0"));
        Filter quiet = Logger.getLogger(QuietCancels.LOGGER).getFilter();
        assertInstanceOf(QuietCancels.class, quiet, "building the server installs the filter");
        assertFalse(quiet.isLoggable(streamError(Http2Error.STREAM_CLOSED)));
        assertTrue(quiet.isLoggable(streamError(Http2Error.PROTOCOL_ERROR)));
        assertTrue(quiet.isLoggable(new LogRecord(Level.WARNING, "Stream Error")));
        LogRecord other = new LogRecord(Level.WARNING, "x");
        other.setThrown(new IllegalStateException("Stream closed before write could take place"));
        assertTrue(quiet.isLoggable(other));
    }

    @Test
    void streamsTheirClientAbandonsPrintNoStackTrace() throws Exception {
        Logger logger = Logger.getLogger(QuietCancels.LOGGER);
        Server server = Main.build(Map.of("PORT", "0")).start();
        Filter quiet = logger.getFilter();
        AtomicInteger dropped = new AtomicInteger();
        List<String> printed = Collections.synchronizedList(new ArrayList<>());
        logger.setFilter(record -> {
            boolean keep = quiet.isLoggable(record);
            if (!keep) {
                dropped.incrementAndGet();
            }
            return keep;
        });
        Handler seen = new Handler() {
            @Override public void publish(LogRecord r) { printed.add(r.getLevel() + " " + r.getMessage()); }
            @Override public void flush() { }
            @Override public void close() { }
        };
        logger.addHandler(seen);
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (dropped.get() == 0 && System.nanoTime() < deadline) {
                abandonStreams(server.getPort(), 4);
                long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                while (dropped.get() == 0 && System.nanoTime() < settle) {
                    Thread.sleep(10);
                }
            }
        } finally {
            logger.removeHandler(seen);
            logger.setFilter(quiet);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertTrue(dropped.get() > 0, "no stream closed with replies queued: the case was not reached");
        assertEquals(List.of(), printed);
    }

    /** Opens `n` Stream calls of the largest count, reads one reply of each, and drops the connection. */
    private static void abandonStreams(int port, int n) throws Exception {
        ManagedChannel channel =
                Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create()).build();
        List<CompletableFuture<Void>> firsts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            CompletableFuture<Void> first = new CompletableFuture<>();
            ClientCall<StreamRequest, Reply> call = channel.newCall(BenchGrpc.getStreamMethod(), CallOptions.DEFAULT);
            call.start(new ClientCall.Listener<>() {
                @Override public void onMessage(Reply reply) { first.complete(null); }
            }, new Metadata());
            call.request(1);
            call.sendMessage(StreamRequest.newBuilder().setText("x".repeat(100))
                    .setCount(BenchService.MAX_STREAM).build());
            call.halfClose();
            firsts.add(first);
        }
        for (CompletableFuture<Void> first : firsts) {
            first.get(10, TimeUnit.SECONDS);
        }
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
}
