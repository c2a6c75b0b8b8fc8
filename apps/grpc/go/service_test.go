// The Bench service over a real loopback connection (port 0): the answer is
// computed from the request, a stream sends exactly the count asked, an
// unknown method is UNIMPLEMENTED and a count out of range INVALID_ARGUMENT;
// and, called directly with an expired context, both calls give up with
// DEADLINE_EXCEEDED (over the wire the client would refuse to send a call
// whose deadline has passed, so the server's side is tested where it lives);
// server reflection lists the Bench service.
package main

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"stampede/apps/grpc/go/benchpb"
)

func dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(0)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestUnaryAnswerIsComputedFromTheRequest(t *testing.T) {
	client := benchpb.NewBenchClient(dial(t))
	for _, req := range []*benchpb.Request{
		{Text: "hello", A: 2, B: 3},
		{Text: "", A: 2147483647, B: 2147483647},
		{Text: "négatif", A: -2147483648, B: -1},
	} {
		reply, err := client.Unary(callCtx(t), req)
		if err != nil {
			t.Fatalf("Unary(%v): %v", req, err)
		}
		want := int64(req.A) + int64(req.B)
		if reply.Text != req.Text || reply.Sum != want || reply.Seq != 0 {
			t.Errorf("Unary(%v) = %v, want text %q sum %d seq 0", req, reply, req.Text, want)
		}
	}
}

func TestStreamSendsTheCountAsked(t *testing.T) {
	client := benchpb.NewBenchClient(dial(t))
	for _, count := range []int32{0, 1, 1000} {
		stream, err := client.Stream(callCtx(t), &benchpb.StreamRequest{Text: "s", Count: count})
		if err != nil {
			t.Fatal(err)
		}
		var got int64
		for {
			reply, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("count %d: after %d replies: %v", count, got, err)
			}
			got++
			if reply.Seq != got || reply.Text != "s" {
				t.Fatalf("count %d: reply %d is %v", count, got, reply)
			}
		}
		if got != int64(count) {
			t.Errorf("asked %d replies, got %d", count, got)
		}
	}
}

func TestStreamCountOutOfRangeIsInvalidArgument(t *testing.T) {
	client := benchpb.NewBenchClient(dial(t))
	for _, count := range []int32{-1, maxStream + 1} {
		stream, err := client.Stream(callCtx(t), &benchpb.StreamRequest{Count: count})
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("count %d: %v, want InvalidArgument", count, err)
		}
	}
}

func TestUnknownMethodIsUnimplemented(t *testing.T) {
	conn := dial(t)
	err := conn.Invoke(callCtx(t), "/stampede.bench.v1.Bench/Nope", &benchpb.Request{}, &benchpb.Reply{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v, want Unimplemented", err)
	}
}

func TestExpiredDeadlineIsDeadlineExceeded(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := (benchServer{}).Unary(ctx, &benchpb.Request{A: 1}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("Unary: %v, want DeadlineExceeded", err)
	}
	stream := &expiredStream{ctx: ctx}
	err := (benchServer{}).Stream(&benchpb.StreamRequest{Count: 5}, stream)
	if status.Code(err) != codes.DeadlineExceeded || stream.sent != 0 {
		t.Errorf("Stream: %v after %d replies, want DeadlineExceeded after 0", err, stream.sent)
	}
}

// expiredStream is a server stream whose context has expired; it counts sends.
type expiredStream struct {
	grpc.ServerStreamingServer[benchpb.Reply]
	ctx  context.Context
	sent int
}

func (s *expiredStream) Context() context.Context { return s.ctx }
func (s *expiredStream) Send(*benchpb.Reply) error {
	s.sent++
	return nil
}

func TestReflectionListsBench(t *testing.T) {
	stream, err := reflectionpb.NewServerReflectionClient(dial(t)).ServerReflectionInfo(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	list := &reflectionpb.ServerReflectionRequest_ListServices{ListServices: ""}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: list}); err != nil {
		t.Fatal(err)
	}
	reply, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range reply.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
		if s.GetName() == "stampede.bench.v1.Bench" {
			return
		}
	}
	t.Fatalf("reflection lists %v, not stampede.bench.v1.Bench", names)
}
