// Stampede's Go reference server: the benchmark contract (apps/CONTRACT.md)
// served by the standard library's net/http, the way a Go user would write it,
// so that numbers measured against it describe Go itself. This file holds the
// process lifecycle only: environment, listening socket, SIGTERM shutdown.
//
// Run it by hand from apps/go:
//
//	go build -o server . && PORT=9009 ./server
//	curl -si http://127.0.0.1:9009/plaintext
//
// Environment: PORT (default 9009), THREADS (GOMAXPROCS; unset or empty keeps
// Go's default), and the runtime's own GOGC and GOMEMLIMIT (the manifest's
// knobs). The database endpoints (database.go) read DATABASE_URL and
// DATABASE_POOL_SIZE (default 8). Per-request logging is deliberately absent.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// shutdownGrace bounds how long in-flight requests may finish after SIGTERM;
// the contract requires the process to be gone within 5 s.
const shutdownGrace = 3 * time.Second

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "go-net-http: error: %v\n", err)
		os.Exit(2)
	}
}

func run() error {
	if err := applyThreads(os.Getenv("THREADS")); err != nil {
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

	srv := &http.Server{
		Handler:           withServerHeader(newMux()),
		ReadHeaderTimeout: 10 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serving on port %s: %w", port, err)
	case <-ctx.Done():
	}

	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutting down: %w", err)
	}
	// A request still running past the grace period (a long /sleep) is cut
	// off when the process exits; that is the contract's 5 s bound at work.
	return nil
}

// applyThreads maps the contract's THREADS onto GOMAXPROCS, Go's unit of
// parallelism. Unset or empty leaves Go's default (the number of CPUs).
func applyThreads(threads string) error {
	if threads == "" {
		return nil
	}
	n, err := strconv.Atoi(threads)
	if err != nil || n < 1 {
		return fmt.Errorf("THREADS=%q is not a positive integer (unset it for Go's default)", threads)
	}
	runtime.GOMAXPROCS(n)
	return nil
}
