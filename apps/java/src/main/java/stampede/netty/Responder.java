// Writes responses with the headers every contract response carries (Server,
// Date, Content-Type, Content-Length) and HTTP/1.1 keep-alive semantics:
// the connection stays open unless the request asked to close it (or is an
// HTTP/1.0 request without keep-alive), in which case it is closed once the
// response is written. Used both inline and from /sleep's and the database's
// deferred answers.
package stampede.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;

final class Responder {

    static final AsciiString SERVER = AsciiString.cached("netty");
    static final AsciiString TEXT_PLAIN = AsciiString.cached("text/plain");
    static final AsciiString APPLICATION_JSON = AsciiString.cached("application/json");
    static final AsciiString TEXT_HTML = AsciiString.cached("text/html; charset=utf-8");
    private static final AsciiString ALLOWED_METHODS = AsciiString.cached("GET, HEAD");

    private final HttpVersion version;
    private final boolean keepAlive;

    /**
     * @param version the request's HTTP version, echoed in the response
     * @param keepAlive whether the request allows the connection to stay open
     */
    Responder(HttpVersion version, boolean keepAlive) {
        this.version = version;
        this.keepAlive = keepAlive;
    }

    /** Writes one response and flushes it; closes the connection afterwards unless kept alive. */
    void send(ChannelHandlerContext ctx, HttpResponseStatus status, AsciiString contentType, byte[] body) {
        write(ctx, build(status, contentType, body));
    }

    /** A plain-text error response such as 400 or 404, with the same headers as any other. */
    void sendError(ChannelHandlerContext ctx, HttpResponseStatus status) {
        write(ctx, buildError(status));
    }

    /** 405 for methods outside the contract; RFC 9110 requires the Allow header. */
    void sendMethodNotAllowed(ChannelHandlerContext ctx) {
        FullHttpResponse response = buildError(HttpResponseStatus.METHOD_NOT_ALLOWED);
        response.headers().set(HttpHeaderNames.ALLOW, ALLOWED_METHODS);
        write(ctx, response);
    }

    private FullHttpResponse buildError(HttpResponseStatus status) {
        byte[] body = (status.reasonPhrase() + "\n").getBytes(StandardCharsets.US_ASCII);
        return build(status, TEXT_PLAIN, body);
    }

    private FullHttpResponse build(HttpResponseStatus status, AsciiString contentType, byte[] body) {
        FullHttpResponse response =
                new DefaultFullHttpResponse(version, status, Unpooled.wrappedBuffer(body));
        HttpHeaders headers = response.headers();
        headers.set(HttpHeaderNames.SERVER, SERVER);
        headers.set(HttpHeaderNames.DATE, HttpDate.now());
        headers.set(HttpHeaderNames.CONTENT_TYPE, contentType);
        headers.setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        return response;
    }

    private void write(ChannelHandlerContext ctx, FullHttpResponse response) {
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (!version.isKeepAliveDefault()) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        ctx.writeAndFlush(response);
    }
}
