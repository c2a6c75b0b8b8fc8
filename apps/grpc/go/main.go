// Stampede's Go gRPC reference server: contracts/grpc/bench.proto served by
// grpc-go, the way a Go user would write it, so that numbers measured against
// it describe grpc-go itself. This file holds the process lifecycle only:
// environment, listening socket, SIGTERM shutdown; service.go the answers.
//
// Run it by hand from apps/grpc/go:
//
//	go generate && go build -o server . && PORT=9009 ./server
//	ghz --insecure --proto ../../../contracts/grpc/bench.proto \
//	    --call stampede.bench.v1.Bench/Unary -d '{"text":"hi","a":2,"b":3}' -n 1 127.0.0.1:9009
//
// Environment: PORT (default 9009), THREADS (GOMAXPROCS; unset or empty keeps
// Go's default), GRPC_STREAM_WORKERS (grpc.NumStreamWorkers: that many
// goroutines serve streams from a pool; unset, empty or 0 keeps grpc-go's
// default of a goroutine per stream) and the runtime's own GOGC and
// GOMEMLIMIT (the manifest's knobs). Per-call logging is deliberately absent.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	"stampede/apps/grpc/go/benchpb"
)

// shutdownGrace bounds how long in-flight calls (a long stream) may finish
// after SIGTERM; the contract requires the process to be gone within 5 s.
const shutdownGrace = 3 * time.Second

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "grpc-go: error: %v\n", err)
		os.Exit(2)
	}
}

func run() error {
	threads, err := positiveFrom("THREADS", os.Getenv("THREADS"), "Go's default")
	if err != nil {
		return err
	}
	if threads > 0 {
		runtime.GOMAXPROCS(threads)
	}
	workers, err := positiveFrom("GRPC_STREAM_WORKERS", os.Getenv("GRPC_STREAM_WORKERS"), "a goroutine per stream")
	if err != nil {
		return err
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "9009"
	}
	// Listen before serving so a busy or invalid port fails at once.
	ln, err := net.Listen("tcp", net.JoinHostPort("0.0.0.0", port))
	if err != nil {
		return fmt.Errorf("cannot listen on port %q (set PORT to a free port): %w", port, err)
	}
	srv := newServer(workers)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving on port %s: %w", port, err)
	case <-ctx.Done():
	}
	stopGracefully(srv, shutdownGrace)
	return nil
}

// newServer is a grpc-go server with the Bench service and server reflection
// (grpc-go's own, v1 and v1alpha); workers > 0 serves streams from a pool of
// that many goroutines.
func newServer(workers int) *grpc.Server {
	var opts []grpc.ServerOption
	if workers > 0 {
		opts = append(opts, grpc.NumStreamWorkers(uint32(workers)))
	}
	srv := grpc.NewServer(opts...)
	benchpb.RegisterBenchServer(srv, benchServer{})
	reflection.Register(srv)
	return srv
}

// stopGracefully lets running calls finish for up to grace, then cuts off the
// rest (a stream of 100000 replies to a slow reader).
func stopGracefully(srv *grpc.Server, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		srv.Stop()
	}
}

// positiveFrom reads a count from a variable: unset or empty is 0 (meaning
// fallback), anything but a positive integer is refused.
func positiveFrom(name, value, fallback string) (int, error) {
	if value == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a positive integer (unset it for %s)", name, value, fallback)
	}
	return n, nil
}
