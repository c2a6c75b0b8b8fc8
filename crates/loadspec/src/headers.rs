//! The request-line and header rules of a load: `--method` is an HTTP
//! token, a header's name is a token and its value holds no CR, LF, NUL or
//! other control character (which would end or split the header). One rule
//! for `-H`, a targets file, a mix entry, gRPC metadata and a scenario's
//! headers, so each is refused in the same words.

use crate::spec_error::{Field, SpecError};

/// `--method`: a non-empty HTTP token (RFC 9110 section 9).
pub fn check_method(method: &str) -> Result<(), SpecError> {
    if method.is_empty() || method.len() > 64 || http::Method::from_bytes(method.as_bytes()).is_err() {
        return Err(SpecError::new(
            Field::Method,
            format!("--method {method:?} is not an HTTP method: use a non-empty token such as GET or POST"),
        ));
    }
    Ok(())
}

/// `--header`: a name that is an HTTP token and a value without CR, LF, NUL
/// or other control characters (which would end or split the header).
pub fn check_header(name: &str, value: &str) -> Result<(), SpecError> {
    match header_problem(name, value) {
        Some(why) => Err(SpecError::new(Field::Headers, format!("--header {name:?}: {why}"))),
        None => Ok(()),
    }
}

/// What is wrong with a request header, if anything: the one rule for `-H`
/// and for the headers of a targets file.
pub fn header_problem(name: &str, value: &str) -> Option<&'static str> {
    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Some("the name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)");
    }
    if http::HeaderValue::from_bytes(value.as_bytes()).is_err() {
        return Some("the value must not contain CR, LF, NUL or other control characters");
    }
    None
}
