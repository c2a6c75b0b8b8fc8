// The Bench service of contracts/grpc/bench.proto, as apps/CONTRACT.md
// ("gRPC") defines its answers: Unary echoes the text and adds the two
// numbers, Stream sends the number of replies asked for, as fast as the
// transport's flow control lets it (onReady), not by queueing every reply in
// memory. Both answer DEADLINE_EXCEEDED once the call's deadline
// (grpc-timeout, grpc-java's Context deadline) has passed; grpc-java answers
// UNIMPLEMENTED for unknown methods and INTERNAL for a message that does not
// decode.
package stampede.grpc;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import stampede.grpc.bench.v1.BenchGrpc;
import stampede.grpc.bench.v1.Reply;
import stampede.grpc.bench.v1.Request;
import stampede.grpc.bench.v1.StreamRequest;

final class BenchService extends BenchGrpc.BenchImplBase {
    /** The largest count a Stream call may ask for (the contract's). */
    static final int MAX_STREAM = 100_000;

    @Override
    public void unary(Request request, StreamObserver<Reply> responses) {
        if (expired()) {
            responses.onError(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded").asRuntimeException());
            return;
        }
        long sum = (long) request.getA() + (long) request.getB();
        responses.onNext(Reply.newBuilder().setText(request.getText()).setSum(sum).build());
        responses.onCompleted();
    }

    @Override
    public void stream(StreamRequest request, StreamObserver<Reply> responses) {
        int count = request.getCount();
        if (count < 0 || count > MAX_STREAM) {
            responses.onError(Status.INVALID_ARGUMENT
                    .withDescription("count " + count + " is outside 0.." + MAX_STREAM).asRuntimeException());
            return;
        }
        ServerCallStreamObserver<Reply> call = (ServerCallStreamObserver<Reply>) responses;
        Sender sender = new Sender(call, request.getText(), count);
        call.setOnCancelHandler(() -> sender.done = true);
        call.setOnReadyHandler(sender);
        // Callbacks of one call run one at a time, so this first turn cannot
        // overlap an onReady one.
        sender.run();
    }

    /** Whether the current call's deadline has passed. */
    static boolean expired() {
        Deadline deadline = Context.current().getDeadline();
        return deadline != null && deadline.isExpired();
    }

    /** Sends the replies of one Stream call while the transport is ready. */
    private static final class Sender implements Runnable {
        private final ServerCallStreamObserver<Reply> call;
        private final Reply.Builder reply;
        private final long count;
        private long next = 1;
        volatile boolean done;

        Sender(ServerCallStreamObserver<Reply> call, String text, int count) {
            this.call = call;
            this.reply = Reply.newBuilder().setText(text);
            this.count = count;
        }

        @Override
        public void run() {
            while (!done && next <= count && call.isReady()) {
                if (expired()) {
                    done = true;
                    call.onError(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded").asRuntimeException());
                    return;
                }
                call.onNext(reply.setSeq(next++).build());
            }
            if (!done && next > count) {
                done = true;
                call.onCompleted();
            }
        }
    }
}
