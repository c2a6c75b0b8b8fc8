//! gRPC status codes and the two trailers that carry a call's outcome,
//! `grpc-status` and its percent-encoded `grpc-message`. A failed call is an
//! HTTP 200 whose trailers say otherwise, so every reader of an answer goes
//! through these names and this parser: `stampede.load/1` counts calls per
//! code name, `stampede check` names the code a server should have sent.

use percent_encoding::percent_decode_str;

/// The status codes of the gRPC specification (doc/statuscodes.md), 0..16.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Code {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl Code {
    /// Every code, in numeric order.
    pub const ALL: [Code; 17] = [
        Code::Ok,
        Code::Cancelled,
        Code::Unknown,
        Code::InvalidArgument,
        Code::DeadlineExceeded,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::ResourceExhausted,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Internal,
        Code::Unavailable,
        Code::DataLoss,
        Code::Unauthenticated,
    ];

    /// The code numbered `n`, if the specification has one.
    pub fn from_u32(n: u32) -> Option<Code> {
        Code::ALL.get(n as usize).copied()
    }

    /// The code's number on the wire.
    pub fn number(self) -> u32 {
        self as u32
    }

    /// The specification's name, as grpc-go and ghz print it (`OK`,
    /// `DEADLINE_EXCEEDED`, ...): the key of a count in `stampede.load/1`.
    pub fn name(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "CANCELLED",
            Code::Unknown => "UNKNOWN",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Aborted => "ABORTED",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
            Code::DataLoss => "DATA_LOSS",
            Code::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// The code named `name` (as [`Code::name`] spells it, any case).
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.number())
    }
}

/// The code of a `grpc-status` value. A number outside 0..16 is UNKNOWN, as
/// the specification asks of clients; text that is not a number is `None`
/// (the server broke the protocol, which the caller reports as such).
pub fn parse_status(value: &[u8]) -> Option<Code> {
    let text = std::str::from_utf8(value).ok()?.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(text.parse::<u32>().ok().and_then(Code::from_u32).unwrap_or(Code::Unknown))
}

/// A `grpc-message` value decoded: percent-encoded UTF-8, where invalid
/// escapes are kept as they are and invalid UTF-8 is replaced.
pub fn parse_message(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value);
    percent_decode_str(&text).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_number_and_specification_name_both_ways() {
        for (n, code) in Code::ALL.iter().enumerate() {
            assert_eq!(code.number(), n as u32);
            assert_eq!(Code::from_u32(n as u32), Some(*code));
            assert_eq!(Code::from_name(code.name()), Some(*code));
        }
        assert_eq!(Code::DeadlineExceeded.name(), "DEADLINE_EXCEEDED");
        assert_eq!(Code::Unauthenticated.number(), 16);
        assert_eq!(Code::from_u32(17), None);
        assert_eq!(Code::from_name("internal"), Some(Code::Internal));
        assert_eq!(Code::Internal.to_string(), "INTERNAL (13)");
    }

    #[test]
    fn grpc_status_is_a_number_out_of_range_is_unknown_and_text_is_refused() {
        assert_eq!(parse_status(b"0"), Some(Code::Ok));
        assert_eq!(parse_status(b"13"), Some(Code::Internal));
        assert_eq!(parse_status(b" 4 "), Some(Code::DeadlineExceeded));
        assert_eq!(parse_status(b"99"), Some(Code::Unknown));
        assert_eq!(parse_status(b"99999999999999"), Some(Code::Unknown));
        assert_eq!(parse_status(b""), None);
        assert_eq!(parse_status(b"OK"), None);
        assert_eq!(parse_status(b"-1"), None);
    }

    #[test]
    fn grpc_message_is_percent_decoded_and_never_fails() {
        assert_eq!(parse_message(b"plain text"), "plain text");
        assert_eq!(parse_message(b"count %3E 100000"), "count > 100000");
        assert_eq!(parse_message(b"caf%C3%A9"), "café");
        assert_eq!(parse_message(b"50%"), "50%", "a bad escape stays as it is");
        assert_eq!(parse_message(b"%FF"), "\u{FFFD}");
    }
}
