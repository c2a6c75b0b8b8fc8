"""The Bench service of contracts/grpc/bench.proto, as apps/CONTRACT.md
("gRPC") defines its answers, on grpcio's asyncio server.

Unary echoes the text and adds the two numbers; Stream sends the number of
replies asked for (an async generator: grpcio awaits each write, so a slow
reader holds it back). Both answer DEADLINE_EXCEEDED once the call's deadline
(grpc-timeout, context.time_remaining()) has passed; grpcio answers
UNIMPLEMENTED for unknown methods and INTERNAL for a message that does not
decode. bench_pb2 and bench_pb2_grpc are generated at build time from the one
declaration of the API (app.toml's build, grpcio-tools' protoc); server
reflection (grpcio-reflection) describes it to clients that lack it.
"""

import grpc
from grpc import aio
from grpc_reflection.v1alpha import reflection

import bench_pb2
import bench_pb2_grpc

# The largest count a Stream call may ask for (the contract's).
MAX_STREAM = 100000


def expired(context) -> bool:
    remaining = context.time_remaining()
    return remaining is not None and remaining <= 0


class Bench(bench_pb2_grpc.BenchServicer):
    async def Unary(self, request, context):
        if expired(context):
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")
        return bench_pb2.Reply(text=request.text, sum=request.a + request.b, seq=0)

    async def Stream(self, request, context):
        count = request.count
        if not 0 <= count <= MAX_STREAM:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"count {count} is outside 0..{MAX_STREAM}")
        for seq in range(1, count + 1):
            if expired(context):
                await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")
            yield bench_pb2.Reply(text=request.text, sum=0, seq=seq)


def new_server(reuse_port: bool) -> aio.Server:
    """An asyncio gRPC server with the Bench service and server reflection
    (grpcio-reflection's, v1 and v1alpha), not yet bound. With
    reuse_port, several processes may listen on one port (the kernel spreads
    connections among them); without, a busy port fails at once."""
    server = aio.server(options=[("grpc.so_reuseport", 1 if reuse_port else 0)])
    bench_pb2_grpc.add_BenchServicer_to_server(Bench(), server)
    services = (bench_pb2.DESCRIPTOR.services_by_name["Bench"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(services, server)
    return server
