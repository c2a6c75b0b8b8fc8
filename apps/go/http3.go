// The HTTP/3 listener, on when HTTP3=1: the same handler (every route of the
// contract, the database endpoints included) over QUIC on the same port number
// over UDP, with quic-go's http3 package, the HTTP/3 server Go users reach for
// (net/http has none). HTTP/3 is always encrypted, so a self-signed ECDSA
// certificate for localhost, 127.0.0.1 and ::1 is generated at start with the
// standard library: load it with `stampede load --http3 -k`. quic-go adds Date
// and, for the contract's short bodies, Content-Length, as net/http does over
// HTTP/1.1.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// h3Listener is an HTTP/3 server bound to its UDP socket, not yet serving.
type h3Listener struct {
	server *http3.Server
	conn   net.PacketConn
}

// listenHTTP3 binds UDP addr (host:port) and prepares handler behind a fresh
// self-signed certificate. Binding first makes a busy port fail at start, with
// the knob named, rather than in the serving goroutine.
func listenHTTP3(addr string, handler http.Handler) (*h3Listener, error) {
	cert, err := selfSignedCertificate()
	if err != nil {
		return nil, fmt.Errorf("HTTP3=1: cannot generate a certificate: %w", err)
	}
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("HTTP3=1: cannot listen on UDP %s (set PORT to a port free on UDP too, or unset HTTP3): %w", addr, err)
	}
	server := &http3.Server{
		Handler: handler,
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS13,
		}),
	}
	return &h3Listener{server: server, conn: conn}, nil
}

// serve answers requests until shutdown; it returns http.ErrServerClosed then.
func (l *h3Listener) serve() error {
	return l.server.Serve(l.conn)
}

// shutdown sends GOAWAY, lets running requests finish until ctx ends, then
// closes every connection and the socket (http3.Server leaves a socket it was
// given open). quic-go waits for each client to close its connection after
// GOAWAY, so a client that went away without closing it (stampede check
// --http3 does) holds the stop for the whole grace period, within the
// contract's 5 s; stampede load closes its connections and the stop is prompt.
func (l *h3Listener) shutdown(ctx context.Context) error {
	err := l.server.Shutdown(ctx)
	if closeErr := l.conn.Close(); err == nil {
		err = closeErr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// selfSignedCertificate makes a P-256 key and a certificate for the loopback
// names a benchmark client uses, valid from an hour ago (clock skew) for a
// year: long enough for any run, and thrown away when the process ends. It
// signs itself, so a client trusts it by name (-k) or as its own root.
func selfSignedCertificate() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, // an end entity, not a CA: webpki refuses a CA as a server's certificate
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
