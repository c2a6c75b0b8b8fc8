// Builds the pipeline of every accepted connection: Netty's HTTP/1.1 codec,
// an aggregator so the handler sees one FullHttpRequest per request, and the
// contract's handler. Kept apart from Main so the transport setup and the
// per-connection protocol stack can be read separately.
package stampede.netty;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;

final class HttpInitializer extends ChannelInitializer<SocketChannel> {

    /** Contract requests are GETs without bodies; anything bigger gets Netty's 413. */
    private static final int MAX_CONTENT_BYTES = 64 * 1024;

    private final Database database;

    HttpInitializer(Database database) {
        this.database = database;
    }

    @Override
    protected void initChannel(SocketChannel channel) {
        ChannelPipeline pipeline = channel.pipeline();
        pipeline.addLast("codec", new HttpServerCodec());
        pipeline.addLast("aggregator", new HttpObjectAggregator(MAX_CONTENT_BYTES));
        pipeline.addLast("contract", new ContractHandler(database));
    }
}
