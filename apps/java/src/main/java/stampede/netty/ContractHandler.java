// Answers each request with the work apps/CONTRACT.md defines for its path.
// Everything runs on the connection's event loop except /sleep, whose answer
// is scheduled on that loop's timer so no thread waits, and the database
// endpoints, whose blocking JDBC work runs on Database's executor and whose
// answer comes back to the loop; /lock holds the one process-wide lock while
// it computes, blocking the event loop as a global lock on a hot path would.
// While an answer is pending, later requests that arrive pipelined on the
// same connection wait their turn, so responses keep the order of their
// requests as HTTP/1.1 requires.
package stampede.netty;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

final class ContractHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final byte[] HELLO = "Hello, World!".getBytes(StandardCharsets.US_ASCII);

    /** Requests pipelined behind a pending answer; touched only on this channel's event loop. */
    private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>();
    private boolean pending;
    private final Database database;

    ContractHandler(Database database) {
        this.database = database;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (pending) {
            waiting.add(request.retain());
            return;
        }
        respond(ctx, request);
    }

    private void respond(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (request.decoderResult().isFailure()) {
            new Responder(request.protocolVersion(), false).sendError(ctx, HttpResponseStatus.BAD_REQUEST);
            return;
        }
        Responder responder = new Responder(request.protocolVersion(), HttpUtil.isKeepAlive(request));
        HttpMethod method = request.method();
        if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.HEAD)) {
            responder.sendMethodNotAllowed(ctx);
            return;
        }
        Route route = Route.of(request.uri());
        int arg = route.arg();
        switch (route.endpoint()) {
            case PLAINTEXT -> responder.send(ctx, HttpResponseStatus.OK, Responder.TEXT_PLAIN, HELLO);
            case JSON -> json(ctx, responder, new Bodies.Message("Hello, World!"));
            case VALUES -> json(ctx, responder, arg);
            case COUNT -> text(ctx, responder, Work.count(arg));
            case FIB -> text(ctx, responder, Work.fib(arg));
            case CPU -> json(ctx, responder, new Bodies.CpuResult(Work.xorshift(arg)));
            case LOCK -> json(ctx, responder, new Bodies.CpuResult(Work.xorshiftLocked(arg)));
            case ALLOC -> {
                Work.alloc(arg);
                json(ctx, responder, new Bodies.Allocated(arg));
            }
            case SLEEP -> sleep(ctx, responder, arg);
            case DB -> deferred(ctx, responder, Responder.APPLICATION_JSON,
                    database.submit(c -> Bodies.json(Database.readWorlds(c, 1)[0])));
            case QUERIES -> deferred(ctx, responder, Responder.APPLICATION_JSON,
                    database.submit(c -> Bodies.json(Database.readWorlds(c, arg))));
            case UPDATES -> deferred(ctx, responder, Responder.APPLICATION_JSON,
                    database.submit(c -> Bodies.json(Database.updateWorlds(c, arg))));
            case FORTUNES -> deferred(ctx, responder, Responder.TEXT_HTML, database.submit(
                    c -> Fortunes.render(Database.readFortunes(c)).getBytes(StandardCharsets.UTF_8)));
            case BAD_INTEGER -> responder.sendError(ctx, HttpResponseStatus.BAD_REQUEST);
            case NOT_FOUND -> responder.sendError(ctx, HttpResponseStatus.NOT_FOUND);
        }
    }

    /** Answers after {@code ms} on the event loop's timer, holding back pipelined requests. */
    private void sleep(ChannelHandlerContext ctx, Responder responder, int ms) {
        hold(ctx);
        ctx.executor().schedule(() -> {
            json(ctx, responder, new Bodies.Slept(ms));
            resume(ctx);
        }, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Answers with the database's body once it is ready (503 if the database failed), on this
     * channel's event loop, holding back pipelined requests meanwhile.
     */
    private void deferred(ChannelHandlerContext ctx, Responder responder, AsciiString contentType,
            CompletableFuture<byte[]> body) {
        hold(ctx);
        body.whenComplete((bytes, error) -> ctx.executor().execute(() -> {
            if (error == null) {
                responder.send(ctx, HttpResponseStatus.OK, contentType, bytes);
            } else {
                String message = (error.getMessage() == null ? "database failed" : error.getMessage()) + "\n";
                responder.send(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, Responder.TEXT_PLAIN,
                        message.getBytes(StandardCharsets.UTF_8));
            }
            resume(ctx);
        }));
    }

    /** Stops reading from the channel until {@link #resume} runs. */
    private void hold(ChannelHandlerContext ctx) {
        pending = true;
        ctx.channel().config().setAutoRead(false);
    }

    /** Reads again and answers the requests that arrived pipelined meanwhile, in order. */
    private void resume(ChannelHandlerContext ctx) {
        pending = false;
        ctx.channel().config().setAutoRead(true);
        FullHttpRequest next;
        while (!pending && (next = waiting.poll()) != null) {
            try {
                respond(ctx, next);
            } finally {
                next.release();
            }
        }
    }

    /** The sequence endpoints answer plain text, as the original API does. */
    private static void text(ChannelHandlerContext ctx, Responder responder, String body) {
        responder.send(ctx, HttpResponseStatus.OK, Responder.TEXT_PLAIN, body.getBytes(StandardCharsets.US_ASCII));
    }

    private static void json(ChannelHandlerContext ctx, Responder responder, Object body) {
        responder.send(ctx, HttpResponseStatus.OK, Responder.APPLICATION_JSON, Bodies.json(body));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        FullHttpRequest dropped;
        while ((dropped = waiting.poll()) != null) {
            dropped.release();
        }
        super.channelInactive(ctx);
    }

    /**
     * A failed socket just closes. Any other failure (such as an OutOfMemoryError from /alloc on
     * a heap smaller than the request) answers 500 and closes, rather than leaving the client
     * waiting or hiding the failure behind a reset.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException || !ctx.channel().isActive()) {
            ctx.close();
            return;
        }
        new Responder(HttpVersion.HTTP_1_1, false).sendError(ctx, HttpResponseStatus.INTERNAL_SERVER_ERROR);
    }
}
