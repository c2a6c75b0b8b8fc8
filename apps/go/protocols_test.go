package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
)

func TestSwitchesAcceptOnlyZeroOneOrUnset(t *testing.T) {
	for value, want := range map[string]bool{"": false, "0": false, "1": true} {
		got, err := switchFrom("HTTP3", value, "an HTTP/3 listener")
		if err != nil || got != want {
			t.Errorf("HTTP3=%q: got %v, %v; want %v", value, got, err, want)
		}
	}
	_, err := switchFrom("HTTP2", "yes", "HTTP/2 beside HTTP/1.1")
	if err == nil || !strings.HasPrefix(err.Error(), `HTTP2="yes" is unknown`) {
		t.Errorf("HTTP2=yes: got %v, want a refusal naming HTTP2", err)
	}
}

// get asks client for path and returns the response with its body read.
func get(t *testing.T, client *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return resp, string(body)
}

func TestHTTP2OnServesH2CByPriorKnowledgeBesideHTTP1(t *testing.T) {
	for _, http2 := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := newServer(withServerHeader(newMux()), http2)
		go srv.Serve(ln)
		url := "http://" + ln.Addr().String() + "/plaintext"

		h1, body := get(t, &http.Client{Timeout: 5 * time.Second}, url)
		if h1.Proto != "HTTP/1.1" || body != "Hello, World!" {
			t.Errorf("http2=%v: HTTP/1.1 client got %s %q", http2, h1.Proto, body)
		}

		priorKnowledge := &http.Transport{Protocols: new(http.Protocols)}
		priorKnowledge.Protocols.SetUnencryptedHTTP2(true)
		client := &http.Client{Transport: priorKnowledge, Timeout: 5 * time.Second}
		if http2 {
			resp, body := get(t, client, url)
			if resp.Proto != "HTTP/2.0" || body != "Hello, World!" || resp.Header.Get("Server") == "" {
				t.Errorf("h2c client got %s %q, Server %q", resp.Proto, body, resp.Header.Get("Server"))
			}
		} else if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			t.Errorf("HTTP2 off: an h2c client got %s; want no HTTP/2", resp.Proto)
		}
		priorKnowledge.CloseIdleConnections()
		srv.Close()
	}
}

func TestHTTP3ServesTheSameRoutesWithItsOwnCertificate(t *testing.T) {
	quic, err := listenHTTP3("127.0.0.1:0", withServerHeader(newMux()))
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- quic.serve() }()

	// Trust exactly the certificate the listener generated, for 127.0.0.1.
	roots := x509.NewCertPool()
	roots.AddCert(quic.server.TLSConfig.Certificates[0].Leaf)
	transport := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	client := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	base := "https://" + quic.conn.LocalAddr().String()

	for path, want := range map[string]struct {
		status int
		body   string
	}{
		"/plaintext":  {200, "Hello, World!"},
		"/values/007": {200, "7"},
		"/values/-1":  {400, ""},
		"/nowhere":    {404, ""},
	} {
		resp, body := get(t, client, base+path)
		if resp.Proto != "HTTP/3.0" || resp.StatusCode != want.status {
			t.Errorf("%s: got %s %d; want HTTP/3.0 %d", path, resp.Proto, resp.StatusCode, want.status)
		}
		if want.body != "" && strings.TrimSpace(body) != want.body {
			t.Errorf("%s: body %q; want %q", path, body, want.body)
		}
		if resp.Header.Get("Server") == "" {
			t.Errorf("%s: no Server header", path)
		}
		if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
			t.Errorf("%s: Date %q: %v", path, resp.Header.Get("Date"), err)
		}
	}
	transport.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := quic.shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve ended with %v; want http.ErrServerClosed", err)
		}
	case <-ctx.Done():
		t.Error("serve still running after shutdown")
	}
}

func TestHTTP3OnABusyUDPPortFailsNamingTheKnob(t *testing.T) {
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, err = listenHTTP3(busy.LocalAddr().String(), http.NotFoundHandler())
	if err == nil || !strings.HasPrefix(err.Error(), "HTTP3=1: cannot listen on UDP") {
		t.Errorf("got %v; want an error naming HTTP3=1", err)
	}
}
