//! The call's deadline, kept by the service itself. tonic's server does read
//! `grpc-timeout`, but when it expires it answers CANCELLED, not
//! DEADLINE_EXCEEDED (`Status::from_error` on `TimeoutExpired`, tonic 0.14
//! src/status.rs), and only while the response headers are pending, so a
//! stream runs on past it. The contract (apps/CONTRACT.md, "gRPC") asks for
//! DEADLINE_EXCEEDED, as grpc-go and grpc-java give, so the handlers parse the
//! header (PROTOCOL-HTTP2.md: at most 8 digits and a unit H M S m u n) and
//! check it before each message they send.

use std::time::Duration;

use tokio::time::Instant;
use tonic::metadata::MetadataMap;
use tonic::Status;

/// When the call must be over, counted from when the handler started; `None`
/// when the client sent no (or an unreadable) `grpc-timeout`.
#[derive(Debug, Clone, Copy)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    pub fn from_metadata(metadata: &MetadataMap) -> Deadline {
        let timeout = metadata.get("grpc-timeout").and_then(|v| v.to_str().ok()).and_then(parse_timeout);
        Deadline(timeout.map(|t| Instant::now() + t))
    }

    /// DEADLINE_EXCEEDED once the deadline has passed.
    pub fn check(&self) -> Result<(), Status> {
        match self.0 {
            Some(at) if Instant::now() >= at => Err(Status::deadline_exceeded("deadline exceeded")),
            _ => Ok(()),
        }
    }
}

/// tonic interceptor: DEADLINE_EXCEEDED for a call whose deadline has passed
/// by the time it arrives. The interceptor answers before the request body
/// is decoded, so the answer is ready at tonic's first poll and its
/// grpc-timeout timer (which answers CANCELLED) never gets to fire first;
/// in a handler, awaiting a body still in flight, it sometimes did.
pub fn refuse_expired(request: tonic::Request<()>) -> Result<tonic::Request<()>, Status> {
    Deadline::from_metadata(request.metadata()).check()?;
    Ok(request)
}

/// `grpc-timeout`'s value: 1 to 8 ASCII digits and one unit letter.
fn parse_timeout(value: &str) -> Option<Duration> {
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_units_and_malformed_values() {
        assert_eq!(parse_timeout("1n"), Some(Duration::from_nanos(1)));
        assert_eq!(parse_timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(parse_timeout("99999999S"), Some(Duration::from_secs(99_999_999)));
        assert_eq!(parse_timeout("2H"), Some(Duration::from_secs(7200)));
        for bad in ["", "m", "123456789S", "1x", "-1S", "1.5S"] {
            assert_eq!(parse_timeout(bad), None, "{bad:?}");
        }
    }

    #[tokio::test]
    async fn an_expired_deadline_is_deadline_exceeded_and_none_never_expires() {
        let mut metadata = MetadataMap::new();
        assert!(Deadline::from_metadata(&metadata).check().is_ok());
        metadata.insert("grpc-timeout", "1n".parse().unwrap());
        let deadline = Deadline::from_metadata(&metadata);
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(deadline.check().unwrap_err().code(), tonic::Code::DeadlineExceeded);
        metadata.insert("grpc-timeout", "10S".parse().unwrap());
        assert!(Deadline::from_metadata(&metadata).check().is_ok());
    }
}
