//! The server under test, as given by the user: a base URL reduced to what an
//! HTTP/1.1 client needs (where to connect, what to put in `Host`, which path
//! prefix to put before each contract path). Parsing it once up front turns a
//! typo into one clear error instead of forty failed rules.

use std::net::SocketAddr;

use crate::error::CheckError;
use stampede_contract::UrlMap;

/// A validated `http://host[:port][/prefix]` base URL.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as shown to people, normalised (`http://127.0.0.1:9009/`).
    display: String,
    /// Value of the `Host` request header.
    host_header: String,
    /// Addresses the host name resolved to, tried in order.
    addrs: Vec<SocketAddr>,
    /// Path prefix without a trailing slash (empty for the usual `/`).
    prefix: String,
    /// Over HTTP/3 (`--http3`): how to reach it; over HTTP/1.1 (TCP) when none.
    pub http3: Option<crate::h3::Quic>,
    /// The server's own URLs for the contract's endpoints (urls.rs).
    urls: UrlMap,
}

impl Target {
    /// Parses and resolves `base`. Only cleartext `http://` is accepted: the
    /// contract is HTTP/1.1 over TCP without TLS.
    #[cfg(test)]
    pub fn parse(base: &str) -> Result<Target, CheckError> {
        Target::parse_for(base, None, crate::options::Options::default().timeout)
    }

    /// Parses and resolves `base`, to be reached over HTTP/3 with `http3`'s
    /// trust (`https://` or `http://`, both on TLS over QUIC), or over
    /// cleartext HTTP/1.1 when none.
    pub fn parse_for(
        base: &str,
        http3: Option<&crate::h3::Http3>,
        timeout: std::time::Duration,
    ) -> Result<Target, CheckError> {
        let bad = |reason: String| CheckError::BadUrl { url: base.to_string(), reason };
        if !base.contains("://") {
            return Err(bad(format!("no scheme (did you mean http://{base}?)")));
        }
        let url = url::Url::parse(base).map_err(|e| bad(e.to_string()))?;
        if url.scheme() != "http" && !(http3.is_some() && url.scheme() == "https") {
            return Err(bad(format!(
                "scheme {:?} is not supported (the contract is cleartext HTTP/1.1, use http://)",
                url.scheme()
            )));
        }
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("no host".to_string()))?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("remove the query string or fragment; rules add their own paths".to_string()));
        }
        let host_header = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        let display = url.to_string();
        let unresolvable =
            |reason: String| CheckError::Unresolvable { url: display.clone(), host: host.to_string(), reason };
        let addrs = url
            .socket_addrs(|| Some(if url.scheme() == "https" { 443 } else { 80 }))
            .map_err(|e| unresolvable(e.to_string()))?;
        if addrs.is_empty() {
            return Err(unresolvable("no address".to_string()));
        }
        let prefix = url.path().trim_end_matches('/').to_string();
        let http3 = match http3 {
            Some(trust) => Some(
                crate::h3::Quic::new(trust, host, base, timeout).map_err(|reason| CheckError::Http3Setup { reason })?,
            ),
            None => None,
        };
        Ok(Target { display, host_header, addrs, prefix, http3, urls: UrlMap::default() })
    }

    /// The normalised URL, for messages.
    pub fn display(&self) -> &str {
        &self.display
    }

    pub fn host_header(&self) -> &str {
        &self.host_header
    }

    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// This target, asking each contract endpoint at the server's own URL.
    pub fn with_urls(mut self, urls: UrlMap) -> Target {
        self.urls = urls;
        self
    }

    /// The request target for a contract path such as `/plaintext`, through
    /// the server's own URLs.
    pub fn request_target(&self, path: &str) -> String {
        format!("{}{}", self.prefix, self.urls.rewrite(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_base_url_keeps_port_in_host_header() {
        let t = Target::parse("http://127.0.0.1:9009").unwrap();
        assert_eq!(t.display(), "http://127.0.0.1:9009/");
        assert_eq!(t.host_header(), "127.0.0.1:9009");
        assert_eq!(t.request_target("/plaintext"), "/plaintext");
        assert_eq!(t.addrs()[0].port(), 9009);
    }

    #[test]
    fn prefix_is_put_before_contract_paths() {
        let t = Target::parse("http://127.0.0.1:80/api/v1/").unwrap();
        assert_eq!(t.request_target("/json"), "/api/v1/json");
        assert_eq!(t.host_header(), "127.0.0.1");
        let mapped = t.with_urls(UrlMap::parse_pairs(&["queries=/q?n="]).unwrap());
        assert_eq!(mapped.request_target("/queries?queries=3"), "/api/v1/q?n=3");
    }

    #[test]
    fn https_and_garbage_are_bad_urls_naming_the_input() {
        for bad in ["https://127.0.0.1/", "127.0.0.1:9009", "not a url", "http://127.0.0.1/?x=1", "http://"] {
            let err = Target::parse(bad).unwrap_err();
            assert!(matches!(err, CheckError::BadUrl { .. }), "{bad}: {err}");
            assert!(err.to_string().contains(bad), "{err}");
        }
        let err = Target::parse("localhost:9009").unwrap_err().to_string();
        assert!(err.contains("did you mean http://localhost:9009?"), "{err}");
    }
}
