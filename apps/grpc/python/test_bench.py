"""The Bench service over a real loopback connection (port 0) with grpcio's
asyncio client: the answer is computed from the request, a stream sends
exactly the count asked, a count out of range is INVALID_ARGUMENT, an unknown
method UNIMPLEMENTED; and, given a call whose deadline has passed, both
handlers answer DEADLINE_EXCEEDED (over the wire the client would not send a
call already past its deadline, so the server's side is tested where it
lives); server reflection lists the Bench service. Run from apps/grpc/python after generating bench_pb2 (app.toml's
build): python3 -m unittest -q
"""

import unittest

import grpc
from grpc import aio
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import bench
import bench_pb2
import bench_pb2_grpc


class OverTheWire(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.server = bench.new_server(reuse_port=False)
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        self.channel = aio.insecure_channel(f"127.0.0.1:{port}")
        self.stub = bench_pb2_grpc.BenchStub(self.channel)

    async def asyncTearDown(self):
        await self.channel.close()
        await self.server.stop(None)

    async def test_unary_answer_is_computed_from_the_request(self):
        for text, a, b in [("hello", 2, 3), ("", 2**31 - 1, 2**31 - 1), ("négatif", -(2**31), -1)]:
            reply = await self.stub.Unary(bench_pb2.Request(text=text, a=a, b=b), timeout=10)
            self.assertEqual(reply, bench_pb2.Reply(text=text, sum=a + b, seq=0))

    async def test_stream_sends_the_count_asked(self):
        for count in (0, 1, 1000):
            replies = [r async for r in self.stub.Stream(bench_pb2.StreamRequest(text="s", count=count), timeout=10)]
            self.assertEqual(replies, [bench_pb2.Reply(text="s", seq=i) for i in range(1, count + 1)])

    async def test_stream_count_out_of_range_is_invalid_argument(self):
        for count in (-1, bench.MAX_STREAM + 1):
            with self.assertRaises(aio.AioRpcError) as raised:
                [r async for r in self.stub.Stream(bench_pb2.StreamRequest(count=count), timeout=10)]
            self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)

    async def test_reflection_lists_the_bench_service(self):
        stub = reflection_pb2_grpc.ServerReflectionStub(self.channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        replies = [r async for r in stub.ServerReflectionInfo(iter([request]), timeout=10)]
        names = [s.name for s in replies[0].list_services_response.service]
        self.assertIn("stampede.bench.v1.Bench", names)

    async def test_unknown_method_is_unimplemented(self):
        nope = self.channel.unary_unary("/stampede.bench.v1.Bench/Nope")
        with self.assertRaises(aio.AioRpcError) as raised:
            await nope(b"", timeout=10)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.UNIMPLEMENTED)


class Aborted(Exception):
    pass


class ExpiredContext:
    """A servicer context whose deadline has passed; abort raises, as grpcio's."""

    def __init__(self):
        self.code = None

    def time_remaining(self):
        return -1.0

    async def abort(self, code, details):
        self.code = code
        raise Aborted(details)


class ExpiredDeadline(unittest.IsolatedAsyncioTestCase):
    async def test_an_expired_deadline_is_deadline_exceeded(self):
        context = ExpiredContext()
        with self.assertRaises(Aborted):
            await bench.Bench().Unary(bench_pb2.Request(a=1), context)
        self.assertEqual(context.code, grpc.StatusCode.DEADLINE_EXCEEDED)
        context = ExpiredContext()
        sent = []
        with self.assertRaises(Aborted):
            async for reply in bench.Bench().Stream(bench_pb2.StreamRequest(count=5), context):
                sent.append(reply)
        self.assertEqual((context.code, sent), (grpc.StatusCode.DEADLINE_EXCEEDED, []))


if __name__ == "__main__":
    unittest.main()
