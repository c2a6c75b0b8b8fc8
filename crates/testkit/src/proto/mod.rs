//! Servers for the protocol tests (tests/it/load/: `pipeline.rs`, `http2.rs`, `http3.rs`), all
//! on 127.0.0.1 port 0 and stopped when dropped: an HTTP/1.1 server that
//! checks how requests are pipelined and answers each batch in order with
//! a different status and framing per position; the certificates every TLS
//! server here and `hostile::Hostile::start_tls` use (a CA and a leaf it
//! signed, generated in the test with `rcgen`); an HTTP/2 server (`h2`)
//! that can send GOAWAY or reset streams; an HTTP/3 server (`quinn` + `h3`) that can reset streams or close its
//! connections mid-run; one gRPC server with the modes `stampede load
//! --grpc` (tests/it/grpc/load.rs) and the gRPC contract
//! (tests/it/grpc/check.rs) are tested against.

pub mod grpc_reflection;
pub mod grpc_server;
pub mod h2_listener;
pub mod h2_server;
pub mod h3_front;
pub mod h3_server;
pub mod pipeline_server;

use std::path::PathBuf;

/// A CA, and a leaf certificate for `localhost` and 127.0.0.1 signed by it.
pub struct Certs {
    pub ca_pem: String,
    pub leaf_der: rustls::pki_types::CertificateDer<'static>,
    pub leaf_key_der: Vec<u8>,
}

impl Certs {
    pub fn generate() -> Certs {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.distinguished_name.push(DnType::CommonName, "stampede test CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let leaf_key = KeyPair::generate().unwrap();
        let leaf_params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).unwrap();
        Certs { ca_pem: ca.pem(), leaf_der: leaf.der().clone(), leaf_key_der: leaf_key.serialize_der() }
    }

    /// Writes the CA certificate to a file for `--ca`.
    pub fn ca_file(&self, name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("stampede-test-{}-{name}.pem", std::process::id()));
        std::fs::write(&path, &self.ca_pem).unwrap();
        path
    }

    pub fn server_config(&self, alpn: &[&[u8]]) -> std::sync::Arc<rustls::ServerConfig> {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(self.leaf_key_der.clone().into());
        let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![self.leaf_der.clone()], key)
            .unwrap();
        cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        std::sync::Arc::new(cfg)
    }
}

/// Every top-level field of a `stampede.load/1` result must have a row in
/// the `stampede.load/1` section of docs/results.md.
pub fn assert_documented(result: &serde_json::Value) {
    let doc = std::fs::read_to_string(crate::repo_root().join("docs/results.md")).unwrap();
    let start = doc.find("## `stampede.load/1`").expect("a stampede.load/1 section");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    for key in result.as_object().unwrap().keys() {
        assert!(section.contains(&format!("| `{key}` |")), "field {key:?} is not documented in docs/results.md");
    }
    for key in result["errors"].as_object().unwrap().keys() {
        assert!(section.contains(&format!("`{key}`")), "errors.{key} is not documented in docs/results.md");
    }
}
