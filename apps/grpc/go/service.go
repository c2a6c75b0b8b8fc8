// The Bench service of contracts/grpc/bench.proto, as apps/CONTRACT.md
// ("gRPC") defines its answers: Unary echoes the text and adds the two
// numbers, Stream sends the number of replies asked for. Both give up with
// DEADLINE_EXCEEDED once the call's deadline (grpc-timeout) has passed,
// checking the context as a Go service that respects deadlines does; unknown
// methods answer UNIMPLEMENTED through the embedded Unimplemented server.
package main

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"stampede/apps/grpc/go/benchpb"
)

// maxStream is the largest count a Stream call may ask for (the contract's).
const maxStream = 100000

type benchServer struct {
	benchpb.UnimplementedBenchServer
}

func (benchServer) Unary(ctx context.Context, req *benchpb.Request) (*benchpb.Reply, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return &benchpb.Reply{Text: req.GetText(), Sum: int64(req.GetA()) + int64(req.GetB())}, nil
}

func (benchServer) Stream(req *benchpb.StreamRequest, stream grpc.ServerStreamingServer[benchpb.Reply]) error {
	count := req.GetCount()
	if count < 0 || count > maxStream {
		return status.Errorf(codes.InvalidArgument, "count %d is outside 0..%d", count, maxStream)
	}
	ctx := stream.Context()
	reply := &benchpb.Reply{Text: req.GetText()}
	for i := int64(1); i <= int64(count); i++ {
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		reply.Seq = i
		if err := stream.Send(reply); err != nil {
			return err
		}
	}
	return nil
}
