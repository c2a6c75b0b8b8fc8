//! `https://` targets: a rustls client driven by the worker's own mio loop.
//!
//! rustls is a state machine that never touches a socket itself, so the
//! event loop stays the one for cleartext: ciphertext is read with one
//! `read_tls` per readable edge and decrypted in place, requests are encrypted
//! into rustls' buffer and sent with one `write_tls`. A read that rustls asked
//! more of than the socket had proves the socket drained, so, as in
//! cleartext, no read is spent on `EAGAIN`. All connections of a run share one
//! `Arc<ClientConfig>`, and so its session cache: a reconnect resumes the last
//! session instead of paying for a full handshake, as a browser would.
//! OpenSSL is not used: its 3.x client is several times slower under load,
//! which a load generator cannot afford.

use crate::core::transport::Transport;
use crate::error::LoadError;
use mio::net::TcpStream;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, HandshakeKind, RootCertStore, SignatureScheme};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How to trust the server and what to offer it.
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    /// Accept any certificate (self-signed test servers). The handshake is
    /// still verified to be signed by the certificate's key.
    pub insecure: bool,
    /// Trust only the certificates in this PEM file instead of the system's.
    pub ca: Option<PathBuf>,
    /// ALPN protocols to offer, most preferred first (`h2`, `http/1.1`).
    pub alpn: Vec<String>,
}

/// What every TLS connection of a run shares.
pub struct TlsShared {
    pub config: Arc<ClientConfig>,
    /// The name sent as SNI (none for an IP address) and checked against the certificate.
    pub name: ServerName<'static>,
    /// The ALPN offer, for messages.
    alpn: Vec<String>,
}

impl TlsShared {
    pub fn new(opts: &TlsOptions, host: &str, url: &str) -> Result<TlsShared, LoadError> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| LoadError::Config(format!("TLS setup failed: {e}")))?;
        let mut config = if opts.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            builder.with_root_certificates(roots(opts.ca.as_ref())?).with_no_client_auth()
        };
        config.alpn_protocols = opts.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|_| LoadError::BadUrl {
            url: url.into(),
            reason: format!("{host:?} is not a valid TLS server name"),
        })?;
        Ok(TlsShared { config: Arc::new(config), name, alpn: opts.alpn.clone() })
    }

    /// One blocking handshake before the run, so that an untrusted
    /// certificate is one clear error rather than a count of failures.
    /// Returns the protocol the server chose by ALPN, if any.
    pub fn preflight(
        &self,
        addr: std::net::SocketAddr,
        url: &str,
        timeout: Duration,
    ) -> Result<Option<String>, LoadError> {
        let mut stream = self.connect_blocking(addr, url, timeout)?;
        stream.conn.send_close_notify();
        let _ = stream.conn.write_tls(&mut stream.sock);
        Ok(stream.conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned()))
    }

    /// A blocking connection with its handshake done, reads and writes
    /// bounded by `timeout`: for the checks before a run.
    pub fn connect_blocking(
        &self,
        addr: std::net::SocketAddr,
        url: &str,
        timeout: Duration,
    ) -> Result<rustls::StreamOwned<ClientConnection, std::net::TcpStream>, LoadError> {
        let fail = |reason: String| LoadError::Tls { url: url.into(), reason };
        let mut tcp = std::net::TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| LoadError::Connect { url: url.into(), reason: e.to_string() })?;
        tcp.set_read_timeout(Some(timeout))?;
        tcp.set_write_timeout(Some(timeout))?;
        let mut conn =
            ClientConnection::new(self.config.clone(), self.name.clone()).map_err(|e| fail(e.to_string()))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp).map_err(|e| fail(describe(&e, &self.alpn)))?;
        }
        Ok(rustls::StreamOwned::new(conn, tcp))
    }
}

fn roots(ca: Option<&PathBuf>) -> Result<RootCertStore, LoadError> {
    let mut store = RootCertStore::empty();
    match ca {
        Some(path) => {
            let bad = |e: String| LoadError::Config(format!("--ca {}: {e}", path.display()));
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .map_err(|e| bad(format!("cannot read a PEM file: {e}")))?
                .collect::<Result<_, _>>()
                .map_err(|e| bad(format!("not a PEM certificate file: {e}")))?;
            if certs.is_empty() {
                return Err(bad("no certificate in the file".into()));
            }
            for cert in certs {
                store.add(cert).map_err(|e| bad(format!("unusable certificate: {e}")))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
        }
    }
    Ok(store)
}

fn describe(e: &io::Error, alpn: &[String]) -> String {
    let hint = " (for a self-signed certificate use --insecure, or --ca FILE to trust its issuer)";
    match e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        Some(rustls::Error::InvalidCertificate(c)) => format!("untrusted certificate: {c}{hint}"),
        Some(rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)) => format!(
            "the server speaks none of the protocols offered by ALPN ({}); drop --http2 or change --alpn",
            alpn.join(", ")
        ),
        Some(rustls::Error::InvalidMessage(_)) => {
            "the server did not answer in TLS (a cleartext port? use http://)".into()
        }
        Some(other) => other.to_string(),
        None if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
            "no TLS answer within --timeout (a cleartext port? use http://)".into()
        }
        None if e.kind() == io::ErrorKind::UnexpectedEof => {
            "the server closed the connection during the handshake (is it speaking TLS?)".into()
        }
        None => e.to_string(),
    }
}

/// `--insecure`: any certificate is accepted, but the handshake signatures are
/// still checked against it, so the connection is what it claims to be.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A TLS client connection over a non-blocking socket.
pub struct TlsStream {
    tcp: TcpStream,
    tls: ClientConnection,
    /// The last socket read returned less than rustls asked for: the socket
    /// is empty, and the next read would be `EAGAIN`.
    drained: bool,
    /// The kernel's receive time of the last socket read that had one.
    rx: Option<i128>,
}

/// Reads the socket for rustls and notes whether the read was short, and
/// its receive time (`rx_time`; none unless stamping was turned on).
struct Probe<'a> {
    tcp: &'a mut TcpStream,
    short: bool,
    rx: &'a mut Option<i128>,
}

impl Read for Probe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, rx) = crate::core::rx_time::recv(self.tcp.as_raw_fd(), buf)?;
        self.short = n < buf.len();
        if rx.is_some() {
            *self.rx = rx;
        }
        Ok(n)
    }
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl TlsStream {
    /// Feeds one socket read to rustls. `Ok(false)` when the socket was empty.
    fn fill(&mut self) -> io::Result<bool> {
        if self.drained {
            self.drained = false;
            return Ok(false);
        }
        let mut probe = Probe { tcp: &mut self.tcp, short: false, rx: &mut self.rx };
        match self.tls.read_tls(&mut probe) {
            Ok(0) => {}
            Ok(_) => self.drained = probe.short,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
        self.tls.process_new_packets().map_err(tls_error)?;
        Ok(true)
    }
}

impl Transport for TlsStream {
    type Shared = TlsShared;
    const HANDSHAKE: bool = true;

    fn wrap(tcp: TcpStream, shared: &TlsShared) -> io::Result<TlsStream> {
        let mut tls = ClientConnection::new(shared.config.clone(), shared.name.clone()).map_err(tls_error)?;
        // Pipelined batches are accepted whole; the socket paces them.
        tls.set_buffer_limit(None);
        Ok(TlsStream { tcp, tls, drained: false, rx: None })
    }

    fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    fn handshake(&mut self) -> io::Result<bool> {
        loop {
            if !self.flush()? {
                return Ok(false);
            }
            if !self.tls.is_handshaking() {
                return Ok(true);
            }
            self.drained = false;
            let mut probe = Probe { tcp: &mut self.tcp, short: false, rx: &mut self.rx };
            match self.tls.read_tls(&mut probe) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
            if let Err(e) = self.tls.process_new_packets() {
                // Tell the server why (an alert) before the socket is dropped.
                let _ = self.tls.write_tls(&mut self.tcp);
                return Err(tls_error(e));
            }
        }
    }

    fn resumed(&self) -> bool {
        self.tls.handshake_kind() == Some(HandshakeKind::Resumed)
    }

    fn agreed_h2(&self) -> bool {
        self.tls.alpn_protocol() == Some(b"h2")
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed the socket without close_notify: for HTTP
                // with framed responses that is an ordinary close.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if !self.fill()? {
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
    }

    fn read_stamped(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<i128>)> {
        self.read(buf).map(|n| (n, self.rx))
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tls.writer().write(buf)
    }

    fn flush(&mut self) -> io::Result<bool> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.tcp) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    #[inline]
    fn drained(_: usize, _: usize) -> bool {
        // A short plaintext read says nothing about the socket; the next read
        // costs no syscall when `fill` already saw the socket empty.
        false
    }
}

/// `--alpn`: the protocols stampede speaks over TCP.
pub(crate) fn check_alpn<S: AsRef<str>>(offer: &[S]) -> Result<(), String> {
    match offer.iter().map(AsRef::as_ref).find(|p| !matches!(*p, "h2" | "http/1.1")) {
        Some(p) => Err(format!("--alpn {p:?}: stampede speaks h2 and http/1.1")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ca_file_problems_name_the_flag_and_the_file() {
        let missing = PathBuf::from("/nonexistent/ca.pem");
        let err = roots(Some(&missing)).unwrap_err().to_string();
        assert!(err.starts_with("--ca /nonexistent/ca.pem: cannot read"), "{err}");
        let empty = std::env::temp_dir().join(format!("stampede-unit-{}-empty.pem", std::process::id()));
        std::fs::write(&empty, "no pem here\n").unwrap();
        let err = roots(Some(&empty)).unwrap_err().to_string();
        assert!(err.contains("no certificate in the file"), "{err}");
        let _ = std::fs::remove_file(empty);
    }

    #[test]
    fn handshake_failures_are_explained_with_a_remedy() {
        let io = |e: rustls::Error| io::Error::new(io::ErrorKind::InvalidData, e);
        let alpn = ["h2".to_string()];
        let untrusted =
            describe(&io(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)), &alpn);
        assert!(untrusted.contains("--insecure") && untrusted.contains("--ca"), "{untrusted}");
        let no_h2 = describe(&io(rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)), &alpn);
        assert!(no_h2.contains("(h2)") && no_h2.contains("--http2"), "{no_h2}");
        let eof = describe(&io::ErrorKind::UnexpectedEof.into(), &alpn);
        assert!(eof.contains("speaking TLS"), "{eof}");
    }

    #[test]
    fn server_names_and_ip_addresses() {
        let opts = TlsOptions { insecure: true, ..TlsOptions::default() };
        let by_name = TlsShared::new(&opts, "localhost", "https://localhost/").unwrap();
        assert!(matches!(by_name.name, ServerName::DnsName(_)), "a name is sent as SNI");
        let by_ip = TlsShared::new(&opts, "[::1]", "https://[::1]/").unwrap();
        assert!(matches!(by_ip.name, ServerName::IpAddress(_)), "an address is not");
    }
}
