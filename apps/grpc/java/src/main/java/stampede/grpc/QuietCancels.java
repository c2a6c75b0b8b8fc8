// A call the client cancels or abandons is normal at the end of every
// benchmark, and grpc-java says so for most: a cancelled call reaches
// BenchService's onCancel handlers, silently. One trace a call is left:
// replies still queued in Netty's HTTP/2 flow control (the client's window
// was full) when the stream closes (RST_STREAM, or the connection closing)
// fail with STREAM_CLOSED "Stream closed before write could take place",
// and grpc-java's NettyServerHandler.onStreamError logs that at WARNING with
// its stack trace while the stream is being closed (at FINE once it is
// gone). No handler code can avoid it, the replies being the transport's
// already; so this filter drops exactly those records: a stream error of
// code STREAM_CLOSED on that logger. Every other stream error, and every
// other logger, still prints.
package stampede.grpc;

import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

final class QuietCancels implements Filter {
    /** grpc-netty-shaded's server handler logger (the class is package-private). */
    static final String LOGGER = "io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler";

    /** Held here: java.util.logging keeps only weak references to its loggers, and would drop the filter. */
    private static final Logger NETTY_SERVER = Logger.getLogger(LOGGER);

    private QuietCancels() { }

    /** Installs the filter on grpc-java's server handler logger, once per process. */
    static synchronized void install() {
        if (!(NETTY_SERVER.getFilter() instanceof QuietCancels)) {
            NETTY_SERVER.setFilter(new QuietCancels());
        }
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        return !(record.getThrown() instanceof Http2Exception.StreamException e
                && e.error() == Http2Error.STREAM_CLOSED);
    }
}
