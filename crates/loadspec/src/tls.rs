//! How `stampede` trusts an `https://` server and what it offers it: the
//! options (`--insecure`, `--ca`, `--alpn`) and the rustls client
//! configuration built from them, shared by every TLS connection of a load
//! and by `stampede check`'s HTTP/3 and gRPC clients, so a certificate is
//! trusted or refused the same way everywhere. rustls lives here, beside
//! the load spec, because the rules are the spec's (which offers are
//! allowed, what an untrusted certificate tells the user to do); the
//! non-blocking stream the load engine drives is the engine's
//! (`stampede_load::tls`). OpenSSL is not used: its 3.x client is several
//! times slower under load, which a load generator cannot afford.

use crate::error::LoadError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::io;
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

/// `--alpn`: the protocols stampede speaks over TCP.
pub fn check_alpn<S: AsRef<str>>(offer: &[S]) -> Result<(), crate::SpecError> {
    match offer.iter().map(AsRef::as_ref).find(|p| !matches!(*p, "h2" | "http/1.1")) {
        Some(p) => Err(crate::SpecError::new(
            crate::spec_error::Field::Alpn,
            format!("--alpn {p:?}: stampede speaks h2 and http/1.1"),
        )),
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
