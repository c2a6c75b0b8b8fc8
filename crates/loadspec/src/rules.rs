//! The rules every load is held to, whoever builds it: each count, size and
//! duration within its documented range ([`crate::limits`], docs/load.md
//! "Limits"), and the combinations no event loop can run refused with the
//! reason. They judge a [`Load`], which a checked spec is and the engine's
//! `LoadConfig` holds, so both are judged by this one function and an
//! absurd value is one line of error before the run, never an abort or an
//! unbounded allocation in it.

use crate::limits;
use crate::load::Load;
use crate::protocol::Protocol;
use crate::spec_error::{Field, SpecError};
use crate::stages::Ramp;
use std::time::Duration;

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this long (the warmup comes before it).
    Duration(Duration),
    /// After this many requests have been sent and answered or failed.
    Requests(u64),
}

/// Why `s` cannot run, naming the flag, or `Ok`.
pub fn check(s: &Load) -> Result<(), SpecError> {
    counts(s)?;
    durations(s)?;
    request(s)?;
    combinations(s)
}

fn counts(s: &Load) -> Result<(), SpecError> {
    use limits::*;
    in_range(Field::Connections, s.connections, MAX_CONNECTIONS)?;
    in_range(Field::MaxConnections, s.max_connections, MAX_CONNECTIONS)?;
    in_range(Field::Threads, s.threads, MAX_THREADS)?;
    in_range(Field::Pipeline, s.protocol.pipeline(), MAX_PIPELINE)?;
    in_range(Field::Streams, s.protocol.streams(), MAX_STREAMS)?;
    if let Some(n) = s.requests_per_connection {
        in_range(Field::RequestsPerConnection, n as usize, MAX_REQUESTS_PER_CONNECTION)?;
        if !matches!(s.protocol, Protocol::Http1 { .. }) {
            return Err(SpecError::new(
                Field::RequestsPerConnection,
                "--requests-per-connection churns HTTP/1.1 connections only; leave it out with --http2 or --http3",
            ));
        }
    }
    if s.slow_log > MAX_SLOW_LOG {
        return Err(SpecError::new(
            Field::SlowLog,
            format!("--slow-log {} is above the maximum of {MAX_SLOW_LOG}", s.slow_log),
        ));
    }
    if let Stop::Requests(n) = s.stop {
        if n > MAX_REQUESTS {
            return Err(SpecError::new(
                Field::Requests,
                format!("--requests {n} is above the maximum of {MAX_REQUESTS}"),
            ));
        }
    }
    Ok(())
}

fn durations(s: &Load) -> Result<(), SpecError> {
    use limits::*;
    let measured = match s.stop {
        Stop::Duration(d) => Some((Field::Duration, d)),
        Stop::Requests(_) => None,
    };
    let all = [(Field::Warmup, s.warmup), (Field::Timeout, s.timeout), (Field::MaxLag, s.max_lag)];
    for (field, d) in all.into_iter().chain(measured) {
        if d > MAX_DURATION {
            return Err(SpecError::new(
                field,
                format!("{} is longer than the maximum of 365 days (365d)", field.flag()),
            ));
        }
    }
    if let Some(g) = s.max_granularity {
        if g > MAX_GRANULARITY {
            return Err(SpecError::new(Field::MaxGranularity, "--max-granularity is longer than the maximum of 1s"));
        }
        if s.rate.is_none() && !s.stages.as_ref().is_some_and(|st| st.ramp == Ramp::Rate) {
            return Err(SpecError::new(
                Field::MaxGranularity,
                "--max-granularity paces the open loop: give --rate (or --stages) with it",
            ));
        }
    }
    if let Some(rate) = s.rate {
        if rate > MAX_RATE_PER_S {
            return Err(SpecError::new(
                Field::Rate,
                format!("--rate {rate} is above the maximum of {MAX_RATE_PER_S} requests per second"),
            ));
        }
    }
    Ok(())
}

fn request(s: &Load) -> Result<(), SpecError> {
    use limits::*;
    if s.body.len() > MAX_BODY_BYTES {
        return Err(SpecError::new(
            Field::Body,
            format!("the request body is {} bytes, above the maximum of {MAX_BODY_BYTES} (64 MiB)", s.body.len()),
        ));
    }
    crate::headers::check_method(&s.method)?;
    if s.headers.len() > MAX_HEADERS {
        return Err(SpecError::new(
            Field::Headers,
            format!("{} --header flags: at most {MAX_HEADERS}", s.headers.len()),
        ));
    }
    for (name, value) in &s.headers {
        crate::headers::check_header(name, value)?;
    }
    let request_bytes = s.encode_request().len();
    let batch = request_bytes.saturating_mul(s.protocol.pipeline());
    if batch > MAX_BATCH_BYTES {
        return Err(SpecError::new(Field::Pipeline, format!(
            "--pipeline {} of a {}-byte request is {batch} bytes per batch, above the maximum of {MAX_BATCH_BYTES} (256 MiB): lower --pipeline or the body",
            s.protocol.pipeline(),
            request_bytes
        )));
    }
    Ok(())
}

fn combinations(s: &Load) -> Result<(), SpecError> {
    if s.threads > s.connections {
        return Err(SpecError::new(
            Field::Threads,
            format!(
                "--threads ({}) must not exceed --connections ({}): each thread needs a connection",
                s.threads, s.connections
            ),
        ));
    }
    if let Stop::Requests(0) = s.stop {
        return Err(SpecError::new(Field::Requests, "--requests must be at least 1"));
    }
    if let Stop::Duration(d) = s.stop {
        if d.is_zero() {
            return Err(SpecError::new(Field::Duration, "--duration must be longer than 0s"));
        }
    }
    if s.timeout.is_zero() {
        return Err(SpecError::new(Field::Timeout, "--timeout must be longer than 0s"));
    }
    if let Some(rate) = s.rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(SpecError::new(Field::Rate, "--rate must be a positive number of requests per second"));
        }
    }
    if s.protocol.pipeline() > 1 && s.rate.is_some() {
        return Err(SpecError::new(
            Field::Pipeline,
            format!(
                "--pipeline {} cannot be combined with --rate: in open loop every request has its own intended send \
                 time, and a batch written at once would hold the early ones until the last is due, a delay the \
                 generator adds to their latency. Use more --connections (or --max-connections) for concurrency",
                s.protocol.pipeline()
            ),
        ));
    }
    http3(s)?;
    if let Some(stages) = &s.stages {
        if stages.ramp == Ramp::Connections
            && (s.rate.is_some() || matches!(s.protocol, Protocol::Http2 { .. } | Protocol::Http3 { .. }))
        {
            return Err(SpecError::new(
                Field::Ramp,
                "--ramp connections is for a closed loop over HTTP/1.1: drop --rate or --http2",
            ));
        }
        if stages.ramp == Ramp::Rate && s.rate.is_none() {
            return Err(SpecError::new(
                Field::Stages,
                "--stages: a rate ramp needs the open loop (the stages' mean as its rate)",
            ));
        }
    }
    crate::tls::check_alpn(&s.tls.alpn)?;
    if !s.target.tls && (s.tls.insecure || s.tls.ca.is_some() || !s.tls.alpn.is_empty()) {
        let field = match (s.tls.insecure, s.tls.ca.is_some()) {
            (true, _) => Field::Insecure,
            (false, true) => Field::Ca,
            (false, false) => Field::Alpn,
        };
        return Err(SpecError::new(
            field,
            format!("--insecure, --ca and --alpn apply to https:// URLs; {} is cleartext", s.target.url),
        ));
    }
    Ok(())
}

/// `--http3`: an `https://` URL, no ALPN offer.
fn http3(s: &Load) -> Result<(), SpecError> {
    if !matches!(s.protocol, Protocol::Http3 { .. }) {
        return Ok(());
    }
    if !s.target.tls {
        return Err(SpecError::new(
            Field::Http3,
            format!("--http3 needs an https:// URL (HTTP/3 is always encrypted); {} is cleartext", s.target.url),
        ));
    }
    if !s.tls.alpn.is_empty() {
        return Err(SpecError::new(Field::Alpn, "--alpn does not apply to --http3 (it offers h3)"));
    }
    Ok(())
}
