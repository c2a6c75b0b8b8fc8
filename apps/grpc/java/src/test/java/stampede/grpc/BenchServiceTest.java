// The Bench service over a real loopback connection (Netty, port 0): the
// answer is computed from the request, a stream sends exactly the count asked,
// a count out of range is INVALID_ARGUMENT, an unknown method UNIMPLEMENTED;
// and, called inside a Context whose deadline has passed, both calls answer
// DEADLINE_EXCEEDED (over the wire grpc-java's client refuses to send a call
// whose deadline has passed, so the server's side is tested where it lives);
// server reflection lists the Bench service.
package stampede.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import stampede.grpc.bench.v1.BenchGrpc;
import stampede.grpc.bench.v1.Reply;
import stampede.grpc.bench.v1.Request;
import stampede.grpc.bench.v1.StreamRequest;

class BenchServiceTest {
    private Server server;
    private ManagedChannel channel;
    private BenchGrpc.BenchBlockingStub stub;

    @BeforeEach
    void start() throws Exception {
        server = Main.build(Map.of("PORT", "0")).start();
        channel = Grpc.newChannelBuilderForAddress("127.0.0.1", server.getPort(), InsecureChannelCredentials.create())
                .build();
        stub = BenchGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void unaryAnswerIsComputedFromTheRequest() {
        int[][] pairs = {{2, 3}, {Integer.MAX_VALUE, Integer.MAX_VALUE}, {Integer.MIN_VALUE, -1}};
        for (int[] p : pairs) {
            Reply reply = stub.unary(Request.newBuilder().setText("t" + p[0]).setA(p[0]).setB(p[1]).build());
            assertEquals("t" + p[0], reply.getText());
            assertEquals((long) p[0] + p[1], reply.getSum());
            assertEquals(0, reply.getSeq());
        }
    }

    @Test
    void streamSendsTheCountAsked() {
        for (int count : new int[] {0, 1, 1000}) {
            Iterator<Reply> replies = stub.stream(StreamRequest.newBuilder().setText("s").setCount(count).build());
            long got = 0;
            while (replies.hasNext()) {
                Reply reply = replies.next();
                got++;
                assertEquals(got, reply.getSeq());
                assertEquals("s", reply.getText());
            }
            assertEquals(count, got);
        }
    }

    @Test
    void streamCountOutOfRangeIsInvalidArgument() {
        for (int count : new int[] {-1, BenchService.MAX_STREAM + 1}) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> stub.stream(StreamRequest.newBuilder().setCount(count).build()).hasNext());
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        }
    }

    @Test
    void unknownMethodIsUnimplemented() {
        MethodDescriptor<Request, Reply> nope = BenchGrpc.getUnaryMethod().toBuilder()
                .setFullMethodName("stampede.bench.v1.Bench/Nope")
                .setRequestMarshaller(ProtoUtils.marshaller(Request.getDefaultInstance()))
                .build();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(
                channel, nope, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), Request.getDefaultInstance()));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
    }

    @Test
    void reflectionListsTheBenchService() throws Exception {
        CompletableFuture<ServerReflectionResponse> reply = new CompletableFuture<>();
        StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override public void onNext(ServerReflectionResponse r) { reply.complete(r); }
                    @Override public void onError(Throwable t) { reply.completeExceptionally(t); }
                    @Override public void onCompleted() { }
                });
        requests.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
        requests.onCompleted();
        List<String> names = reply.get(10, TimeUnit.SECONDS).getListServicesResponse().getServiceList().stream()
                .map(ServiceResponse::getName).toList();
        assertTrue(names.contains("stampede.bench.v1.Bench"), "reflection lists " + names);
    }

    @Test
    void expiredDeadlineIsDeadlineExceeded() throws Exception {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        Context.CancellableContext expired =
                Context.current().withDeadline(Deadline.after(-1, TimeUnit.SECONDS), timer);
        try {
            Recorder unary = new Recorder();
            expired.run(() -> new BenchService().unary(Request.newBuilder().setA(1).build(), unary));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, unary.status());
            assertEquals(0, unary.replies.size());
            Recorder stream = new Recorder();
            expired.run(() -> new BenchService().stream(StreamRequest.newBuilder().setCount(5).build(), stream));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, stream.status());
            assertEquals(0, stream.replies.size());
        } finally {
            expired.cancel(null);
            timer.shutdownNow();
        }
    }

    /** A server-side observer that is always ready and records what it is given. */
    private static final class Recorder extends ServerCallStreamObserver<Reply> {
        final List<Reply> replies = new ArrayList<>();
        Throwable error;

        Status.Code status() {
            return error == null ? Status.Code.OK : Status.fromThrowable(error).getCode();
        }

        @Override public void onNext(Reply reply) { replies.add(reply); }
        @Override public void onError(Throwable t) { error = t; }
        @Override public void onCompleted() { }
        @Override public boolean isReady() { return true; }
        @Override public boolean isCancelled() { return false; }
        @Override public void setOnReadyHandler(Runnable handler) { }
        @Override public void setOnCancelHandler(Runnable handler) { }
        @Override public void setCompression(String compression) { }
        @Override public void disableAutoInboundFlowControl() { }
        @Override public void request(int count) { }
        @Override public void setMessageCompression(boolean enable) { }
    }
}
