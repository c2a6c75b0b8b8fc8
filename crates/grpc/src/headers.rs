//! The header fields of a gRPC request beyond the pseudo-headers (`:method
//! POST`, `:path /package.Service/Method`, which the HTTP/2 engine writes),
//! and the content-type test an answer must pass. Declared here so the load
//! and the check send the same call.

use std::time::Duration;

use crate::timeout::encode_timeout;

/// The content-type of a request (and of a gRPC server's answer).
pub const CONTENT_TYPE: &str = "application/grpc";

/// The header fields a call sends: `content-type`, `te: trailers` (which
/// tells proxies the client reads trailers), `grpc-timeout` when there is a
/// deadline, then the user's metadata in its order. A metadata name that
/// repeats one of the first three replaces it, so the user keeps the last
/// word (`content-type: application/grpc+proto`).
pub fn request_headers(deadline: Option<Duration>, metadata: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = vec![("content-type".to_string(), CONTENT_TYPE.to_string()), ("te".into(), "trailers".into())];
    if let Some(d) = deadline {
        out.push(("grpc-timeout".into(), encode_timeout(d)));
    }
    for (name, value) in metadata {
        let name = name.trim().to_ascii_lowercase();
        out.retain(|(n, _)| *n != name || !["content-type", "te", "grpc-timeout"].contains(&n.as_str()));
        out.push((name, value.clone()));
    }
    out
}

/// Whether an answer's `content-type` is gRPC's: `application/grpc`, alone
/// or followed by `+subtype` or `;parameters`, any case.
pub fn is_grpc_content_type(value: &[u8]) -> bool {
    let v = value.trim_ascii();
    let prefix = CONTENT_TYPE.as_bytes();
    v.len() >= prefix.len()
        && v[..prefix.len()].eq_ignore_ascii_case(prefix)
        && matches!(v.get(prefix.len()), None | Some(b'+') | Some(b';'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(n: &str, v: &str) -> (String, String) {
        (n.to_string(), v.to_string())
    }

    #[test]
    fn a_call_sends_grpc_content_type_te_trailers_the_deadline_and_the_metadata() {
        let plain = request_headers(None, &[]);
        assert_eq!(plain, vec![pair("content-type", "application/grpc"), pair("te", "trailers")]);
        let full = request_headers(Some(Duration::from_millis(200)), &[pair("X-Tenant", "a"), pair("x-tenant", "b")]);
        assert_eq!(
            full,
            vec![
                pair("content-type", "application/grpc"),
                pair("te", "trailers"),
                pair("grpc-timeout", "200m"),
                pair("x-tenant", "a"),
                pair("x-tenant", "b"),
            ],
            "repeated metadata is sent as repeated fields"
        );
        let proto = request_headers(None, &[pair("content-type", "application/grpc+proto")]);
        assert_eq!(proto, vec![pair("te", "trailers"), pair("content-type", "application/grpc+proto")]);
    }

    #[test]
    fn only_application_grpc_and_its_subtypes_are_a_grpc_content_type() {
        for yes in ["application/grpc", "application/grpc+proto", "Application/GRPC; charset=x", " application/grpc "] {
            assert!(is_grpc_content_type(yes.as_bytes()), "{yes}");
        }
        for no in ["application/grpcx", "application/json", "text/html", "", "application/grp"] {
            assert!(!is_grpc_content_type(no.as_bytes()), "{no}");
        }
    }
}
