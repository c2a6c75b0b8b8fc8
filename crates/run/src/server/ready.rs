//! When a started server counts as up. `stampede run` polls one path until it
//! answers, and that moment is the run's start time, so the path must be one
//! the app actually serves: an app that implements only the `sequence` API has
//! no `/plaintext`. The path comes from the app's manifest (`ready`), else
//! from the contract it claims (the contract file's `ready`, so each built-in
//! contract says it in one place), else any HTTP response on `/`, whatever
//! its status, for an app that claims no contract. An app with its own URLs
//! (the manifest's `urls` or `tfb_config`) is asked the contract's ready path
//! at its own URL, or, when it does not serve that endpoint (a TechEmpower
//! database-only test has no `/plaintext`), one it does serve. An app whose
//! contract is gRPC (`protocol = "grpc"`) is ready when a call of the
//! contract's `ready` method with an empty request answers `OK`: no gRPC
//! library answers HTTP/1.1 (apps/CONTRACT.md, "gRPC").

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::scenario::manifest::Manifest;
pub use stampede_grpc::client::NotReady;

/// The request that tells a server is ready, and what answer counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadyCheck {
    /// The request target, e.g. `/plaintext`.
    pub path: String,
    /// True: any HTTP status counts (the server answers at all); false: `200` only.
    pub any_status: bool,
    /// True: `path` is a gRPC method, called with an empty request over
    /// HTTP/2 (prior knowledge) until it answers `OK`.
    #[serde(default)]
    pub grpc: bool,
}

impl ReadyCheck {
    /// `200` on `path`.
    pub fn ok_on(path: &str) -> ReadyCheck {
        ReadyCheck { path: path.to_string(), any_status: false, grpc: false }
    }

    /// Any HTTP response on `/`.
    pub fn any_answer() -> ReadyCheck {
        ReadyCheck { path: "/".into(), any_status: true, grpc: false }
    }

    /// The app's manifest `ready`, else its contract's, else any answer on `/`.
    /// Fails (one line naming the contract) when the claimed contract cannot be read.
    pub fn for_app(app: &Manifest) -> Result<ReadyCheck, String> {
        if let Some(path) = app.ready.as_deref() {
            return Ok(ReadyCheck::ok_on(path));
        }
        let Some(claimed) = app.contract() else {
            return Ok(served(&app.urls).unwrap_or_else(ReadyCheck::any_answer));
        };
        let contract = stampede_contract::resolve(&claimed).map_err(|e| format!("{}: contract: {e}", app.name))?;
        let Some(path) = contract.ready.as_deref() else {
            return Ok(served(&app.urls).unwrap_or_else(ReadyCheck::any_answer));
        };
        if contract.protocol == stampede_contract::Protocol::Grpc {
            return Ok(ReadyCheck { path: path.to_string(), any_status: false, grpc: true });
        }
        if app.urls.is_empty() || app.urls.entries().contains_key(stampede_contract::endpoint_of(path)) {
            return Ok(ReadyCheck::ok_on(&app.urls.rewrite(path)));
        }
        Ok(served(&app.urls).unwrap_or_else(|| ReadyCheck::ok_on(path)))
    }

    /// Whether a response with this status means the server is ready.
    pub fn accepts(&self, status: u16) -> bool {
        self.any_status || status == 200
    }

    /// Asks the server on `host:port` once: how long a ready answer took, or
    /// what came instead: an HTTP status it does not accept or a gRPC
    /// status (answered), or no answer.
    pub fn ask_at(&self, host: &str, port: u16, timeout: std::time::Duration) -> Result<std::time::Duration, NotReady> {
        if self.grpc {
            use std::net::ToSocketAddrs;
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            let addr = (bare, port).to_socket_addrs().ok().and_then(|mut a| a.next());
            let addr = addr.ok_or_else(|| NotReady::NoAnswer(format!("{host} has no address")))?;
            return stampede_grpc::client::ready(addr, &self.path, timeout);
        }
        match crate::server::http::get_status_at(host, port, &self.path, timeout) {
            Ok((status, took)) if self.accepts(status) => Ok(took),
            Ok((status, _)) => Err(NotReady::Answered(format!("answers {status}"))),
            Err(e) => Err(NotReady::NoAnswer(e.to_string())),
        }
    }
}

/// `200` on one of the app's own URLs: the cheapest endpoint it serves
/// (plaintext, json, db, fortunes), else one that takes a count, asked for 1.
fn served(urls: &stampede_contract::UrlMap) -> Option<ReadyCheck> {
    let plain = ["plaintext", "json", "db", "fortunes"].into_iter().find(|e| urls.entries().contains_key(*e));
    let path = match plain {
        Some(endpoint) => urls.rewrite(&format!("/{endpoint}")),
        None => urls.rewrite(&format!("/{}?queries=1", urls.entries().keys().next()?)),
    };
    Some(ReadyCheck::ok_on(&path))
}

impl fmt::Display for ReadyCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.grpc {
            write!(f, "gRPC OK from {}", self.path)
        } else if self.any_status {
            write!(f, "any HTTP response on {}", self.path)
        } else {
            write!(f, "200 on {}", self.path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hosts.server_address` reached another server (it answered, but not
    /// ready) or nothing: the remote server's error says which by this type.
    #[test]
    fn a_wrong_answer_and_no_answer_are_told_apart() {
        use crate::server::http::{answer_once, free_port};
        let timeout = std::time::Duration::from_secs(5);
        let (port, server) = answer_once(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        let got = ReadyCheck::ok_on("/plaintext").ask_at("127.0.0.1", port, timeout);
        server.join().unwrap();
        assert_eq!(got, Err(NotReady::Answered("answers 404".into())));
        let (port, server) = answer_once(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        assert!(ReadyCheck::any_answer().ask_at("127.0.0.1", port, timeout).is_ok(), "any status counts");
        server.join().unwrap();
        let nobody = ReadyCheck::ok_on("/plaintext").ask_at("127.0.0.1", free_port().unwrap(), timeout);
        assert!(matches!(nobody, Err(NotReady::NoAnswer(_))), "{nobody:?}");
    }

    fn manifest(text: &str) -> Manifest {
        let mut m: Manifest = toml::from_str(&format!("name = \"a\"\nrun = \"r\"\n{text}")).unwrap();
        m.dir = "apps/a".into();
        m
    }

    #[test]
    fn the_manifest_then_the_contract_then_any_answer_on_root() {
        assert_eq!(ReadyCheck::for_app(&manifest("")).unwrap(), ReadyCheck::ok_on("/plaintext"));
        assert_eq!(ReadyCheck::for_app(&manifest("contract = \"tfb\"")).unwrap(), ReadyCheck::ok_on("/plaintext"));
        assert_eq!(
            ReadyCheck::for_app(&manifest("contract = \"sequence\"")).unwrap(),
            ReadyCheck::ok_on("/api/count/1")
        );
        let none = ReadyCheck::for_app(&manifest("contract = \"none\"")).unwrap();
        assert_eq!(none, ReadyCheck::any_answer());
        assert!(none.accepts(404) && none.accepts(500));
        assert_eq!(none.to_string(), "any HTTP response on /");
        let own = ReadyCheck::for_app(&manifest("contract = \"sequence\"\nready = \"/health\"")).unwrap();
        assert_eq!(own, ReadyCheck::ok_on("/health"));
        assert!(own.accepts(200) && !own.accepts(404));
        assert_eq!(own.to_string(), "200 on /health");
    }

    #[test]
    fn a_database_only_server_is_asked_a_url_it_serves() {
        assert_eq!(ReadyCheck::for_app(&manifest("contract = \"db\"")).unwrap(), ReadyCheck::ok_on("/db"));
        let grpc = ReadyCheck::for_app(&manifest("contract = \"grpc\"")).unwrap();
        assert!(grpc.grpc && grpc.path == "/stampede.bench.v1.Bench/Unary", "{grpc:?}");
        assert_eq!(grpc.to_string(), "gRPC OK from /stampede.bench.v1.Bench/Unary");
        assert!(!ReadyCheck::for_app(&manifest("contract = \"tfb\"")).unwrap().grpc);
        let only_db = manifest("contract = \"tfb\"\n[urls]\ndb = \"/dbs\"\nqueries = \"/queries/\"");
        assert_eq!(ReadyCheck::for_app(&only_db).unwrap(), ReadyCheck::ok_on("/dbs"));
        let only_queries = manifest("contract = \"none\"\n[urls]\nqueries = \"/q?n=\"");
        assert_eq!(ReadyCheck::for_app(&only_queries).unwrap(), ReadyCheck::ok_on("/q?n=1"));
        let own_plaintext = manifest("[urls]\nplaintext = \"/hello/text\"");
        assert_eq!(ReadyCheck::for_app(&own_plaintext).unwrap(), ReadyCheck::ok_on("/hello/text"));
    }

    #[test]
    fn an_unreadable_contract_is_one_line_naming_the_app() {
        let e = ReadyCheck::for_app(&manifest("contract = \"missing.toml\"")).unwrap_err();
        assert!(e.starts_with("a: contract: cannot read contract file apps/a/missing.toml"), "{e}");
        assert!(!e.contains('\n'));
    }
}
