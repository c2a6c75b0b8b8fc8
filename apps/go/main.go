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
// DATABASE_POOL_SIZE (default 8). HTTP2=1 serves HTTP/2 cleartext by prior
// knowledge (h2c) beside HTTP/1.1 on the TCP port, with net/http's own HTTP/2;
// HTTP3=1 adds an HTTP/3 listener on the same port number over UDP (http3.go).
// Per-request logging is deliberately absent.
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
	http2, err := switchFrom("HTTP2", os.Getenv("HTTP2"), "HTTP/2 beside HTTP/1.1")
	if err != nil {
		return err
	}
	http3, err := switchFrom("HTTP3", os.Getenv("HTTP3"), "an HTTP/3 listener")
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
	handler := withServerHeader(newMux())
	var quic *h3Listener
	if http3 {
		// The port the TCP socket got (PORT=0 picks one), on UDP.
		udp := net.JoinHostPort("0.0.0.0", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		if quic, err = listenHTTP3(udp, handler); err != nil {
			ln.Close()
			return err
		}
	}
	srv := newServer(handler, http2)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(ln) }()
	if quic != nil {
		go func() { serveErr <- quic.serve() }()
	}

	select {
	case err := <-serveErr:
		return fmt.Errorf("serving on port %s: %w", port, err)
	case <-ctx.Done():
	}

	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// HTTP/3 stops concurrently with HTTP/1.1 and HTTP/2, within the same grace.
	quicErr := make(chan error, 1)
	go func() {
		if quic != nil {
			quicErr <- quic.shutdown(shutdownCtx)
		} else {
			quicErr <- nil
		}
	}()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutting down: %w", err)
	}
	select {
	case err := <-quicErr:
		if err != nil {
			return fmt.Errorf("shutting down HTTP/3: %w", err)
		}
	case <-shutdownCtx.Done():
	}
	// A request still running past the grace period (a long /sleep) is cut
	// off when the process exits; that is the contract's 5 s bound at work.
	return nil
}

// newServer serves handler over HTTP/1.1 and, when http2 is on, over HTTP/2
// cleartext by prior knowledge (a client opening with the HTTP/2 preface, as
// `stampede load --http2` does on http://) on the same connections' listener.
func newServer(handler http.Handler, http2 bool) *http.Server {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
	}
	if http2 {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	return srv
}

// switchFrom reads an on/off variable name (HTTP2, HTTP3): 1 turns on what,
// 0 or unset leaves it off, anything else is refused.
func switchFrom(name, value, what string) (bool, error) {
	switch value {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q is unknown (use 1 for %s, 0 or unset for none)", name, value, what)
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
