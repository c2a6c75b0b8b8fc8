//! `stampede check` over gRPC: a contract with `protocol = "grpc"`
//! (contracts/grpc.toml) is a list of calls, each made on a connection of
//! its own (or, for `calls = N`, N at once over `connections`), each answer
//! judged by judge.rs, then the every-call checks over all the answers. The
//! report is the same `stampede.check/1` the HTTP contracts give, so
//! `stampede run` refuses a gRPC server that fails exactly as it refuses an
//! HTTP one.

mod every;
mod judge;
mod schema;

use std::hash::RandomState;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use stampede_grpc::{frame, Method};

use crate::error::CheckError;
use crate::options::Options;
use crate::report::{Report, RuleResult, RuleVerdict};
use judge::Verdict;
use stampede_contract::{Call, Contract};
use stampede_grpc::client::{self, Endpoint, Exchange, Outgoing};

/// Checks the gRPC server at `base` (`http://host:port` or `https://…`)
/// against every call of `contract`.
pub fn check(base: &str, contract: &Contract, options: &Options) -> Result<Report, CheckError> {
    let (endpoint, display) = endpoint(base, options)?;
    let schema = schema::schema_of(contract, (&endpoint, display.as_str()), options.timeout)
        .map_err(|reason| CheckError::Grpc { reason })?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let seed = RandomState::new();
    let mut log: Vec<Exchange> = Vec::new();
    let mut results = Vec::new();
    for (index, call) in contract.calls.iter().enumerate() {
        let method = schema.method(&call.path).ok();
        let (result, exchanges) = runtime.block_on(judge_call(call, method, &endpoint, &seed, options.timeout));
        if index == 0 && exchanges.iter().all(|e| e.http_status.is_none()) {
            if let Some(reason) = exchanges.iter().find_map(|e| e.error.clone()) {
                return Err(CheckError::Unreachable { url: display, reason });
            }
        }
        results.push(result);
        log.extend(exchanges);
    }
    results.extend(contract.every_call.iter().map(|check| every::judge(*check, &log)));
    Ok(Report::new(&contract.name, &contract.version, display, results))
}

/// The endpoint of `base`, and the URL as reports show it.
fn endpoint(base: &str, options: &Options) -> Result<(Endpoint, String), CheckError> {
    let bad = |reason: String| CheckError::BadUrl { url: base.to_string(), reason };
    let url = url::Url::parse(base).map_err(|e| bad(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!(
            "scheme {:?}: give http:// (HTTP/2 by prior knowledge) or https:// (TLS, ALPN h2)",
            url.scheme()
        )));
    }
    let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("no host".into()))?.to_string();
    let port = url.port_or_known_default().expect("http and https have default ports");
    let display = url.to_string();
    let addrs = url.socket_addrs(|| Some(port)).map_err(|e| CheckError::Unresolvable {
        url: display.clone(),
        host: host.clone(),
        reason: e.to_string(),
    })?;
    let authority = url.port().map_or(host.clone(), |p| format!("{host}:{p}"));
    let tls = if url.scheme() == "https" {
        let trust = options.tls.clone().unwrap_or_default();
        let opts = stampede_spec::tls::TlsOptions { insecure: trust.insecure, ca: trust.ca, alpn: vec!["h2".into()] };
        let shared = stampede_spec::tls::TlsShared::new(&opts, &host, base)
            .map_err(|e| CheckError::Http3Setup { reason: e.to_string() })?;
        Some((shared.config.clone(), shared.name.clone()))
    } else {
        None
    };
    Ok((Endpoint { addrs, authority, tls }, display))
}

/// Makes `call` (once, or `calls` times at once) and judges every answer.
async fn judge_call(
    call: &Call,
    method: Option<Method>,
    endpoint: &Endpoint,
    seed: &RandomState,
    timeout: Duration,
) -> (RuleResult, Vec<Exchange>) {
    let (id, description) = (call.id.as_str(), call.describe());
    let count = call.calls.unwrap_or(1) as usize;
    let connections = call.connections.unwrap_or(1) as usize;
    let limit = call.limit(timeout);
    let mut senders = Vec::new();
    for _ in 0..connections {
        let connected = tokio::time::timeout(timeout, client::connect(endpoint)).await;
        match connected
            .unwrap_or_else(|_| Err(format!("no connection within {}", stampede_grpc::short_duration(timeout))))
        {
            Ok(sender) => senders.push(sender),
            Err(reason) => {
                let ex = Exchange { error: Some(reason.clone()), ..Exchange::default() };
                return (RuleResult::fail(id, &description, reason, None), vec![ex]);
            }
        }
    }
    let mut requests = Vec::new();
    let mut tasks = Vec::new();
    let authority: Arc<str> = endpoint.authority.clone().into();
    for n in 0..count {
        let (request, out) = match outgoing(call, method.as_ref(), seed, n as u64) {
            Ok(made) => made,
            Err(reason) => return (RuleResult::fail(id, &description, reason, None), Vec::new()),
        };
        let (sender, authority) = (senders[n % connections].clone(), authority.clone());
        tasks.push(tokio::spawn(async move { client::call(sender, &authority, &out, limit).await }));
        requests.push(request);
    }
    let mut exchanges = Vec::new();
    for task in tasks {
        exchanges.push(task.await.expect("a call task does not panic"));
    }
    let verdicts: Vec<Verdict> =
        exchanges.iter().zip(&requests).map(|(ex, request)| judge::judge(call, method.as_ref(), request, ex)).collect();
    (summarise(id, &description, &verdicts, &exchanges), exchanges)
}

/// The request's JSON (random values filled in) and the call to send.
fn outgoing(call: &Call, method: Option<&Method>, seed: &RandomState, n: u64) -> Result<(Value, Outgoing), String> {
    let (request, body) = match (&call.request, call.raw_body()) {
        (Some(template), _) => {
            let request = judge::fill(template, seed, n);
            let method = method.ok_or_else(|| format!("{}: no such method in the contract's .proto", call.path))?;
            let body = method.encode_request(&request.to_string()).map_err(|e| e.to_string())?;
            (request, body)
        }
        (None, Some(raw)) => (Value::Null, frame(&raw)),
        (None, None) => unreachable!("validated: request or body_hex"),
    };
    let metadata: Vec<(String, String)> =
        call.timeout.iter().map(|t| ("grpc-timeout".to_string(), t.clone())).collect();
    let mut line = format!("POST {}", call.path);
    for (name, value) in &metadata {
        line.push_str(&format!(" {name}: {value}"));
    }
    match &call.request {
        Some(_) => line.push_str(&format!(" {request}")),
        None => line.push_str(&format!(" (message bytes {:?})", call.body_hex.as_deref().unwrap_or(""))),
    }
    let headers = stampede_grpc::request_headers(None, &metadata);
    let out = Outgoing {
        path: call.path.clone(),
        body: Bytes::from(body),
        headers,
        read_rate: call.read_rate,
        request_line: line,
    };
    Ok((request, out))
}

/// One result for the call: its verdict, or for N at once how many failed
/// and the first failure.
fn summarise(id: &str, description: &str, verdicts: &[Verdict], exchanges: &[Exchange]) -> RuleResult {
    let failed: Vec<usize> =
        verdicts.iter().enumerate().filter(|(_, v)| matches!(v, Verdict::Fail(_))).map(|(i, _)| i).collect();
    if let Some(&first) = failed.first() {
        let Verdict::Fail(reason) = &verdicts[first] else { unreachable!() };
        let reason = if verdicts.len() > 1 {
            format!("{} of {} calls failed; call {}: {reason}", failed.len(), verdicts.len(), first + 1)
        } else {
            reason.clone()
        };
        return every::result(id, description, Err(reason), &exchanges[first]);
    }
    match verdicts.iter().enumerate().find(|(_, v)| matches!(v, Verdict::Warn(_))) {
        Some((i, Verdict::Warn(warning))) => every::result(id, description, Ok(Some(warning.clone())), &exchanges[i]),
        _ => RuleResult::pass(id, description),
    }
}
