//! A URL's userinfo (`http://user:password@host/`) means HTTP Basic
//! authentication, as curl reads it: it becomes an `Authorization: Basic`
//! header on the requests to that URL, and only the URL without it goes on
//! the wire. A header `Authorization` the user gives wins over it, as with
//! curl's `-H`. The URL that is printed and recorded keeps the user and
//! masks the password (`stampede_schema::redact`), so a result that travels
//! carries no secret.

use base64::Engine as _;
use percent_encoding::percent_decode_str;
use stampede_schema::redact;

/// A target URL made ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Credentialed {
    /// The URL without its userinfo.
    pub url: String,
    /// The URL as results and messages show it: its password masked.
    pub shown: String,
    /// `Authorization: Basic …` when the URL had a userinfo.
    pub header: Option<(String, String)>,
}

/// `url`'s userinfo taken out and made into the header it means.
pub fn split(url: &str) -> Credentialed {
    let shown = redact::url(url);
    let Some(info) = redact::userinfo(url) else {
        return Credentialed { url: url.to_string(), shown, header: None };
    };
    // RFC 7617: base64 of the user, a colon and the password, as bytes
    // (percent-decoded, as curl sends them).
    let mut pair: Vec<u8> = percent_decode_str(info.user).collect();
    pair.push(b':');
    pair.extend(percent_decode_str(info.password.unwrap_or("")));
    let value = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair));
    let without = format!("{}{}", &url[..info.range.start], &url[info.range.end..]);
    Credentialed { url: without, shown, header: Some(("Authorization".to_string(), value)) }
}

/// `headers` with the URL's `Authorization` added, unless one is given.
pub fn with_header(mut headers: Vec<(String, String)>, header: &Option<(String, String)>) -> Vec<(String, String)> {
    if let Some((name, value)) = header {
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            headers.push((name.clone(), value.clone()));
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_becomes_basic_authorization_as_curl_sends_it() {
        let c = split("http://al%40ice:p%3Ass@127.0.0.1:8080/x?y=1");
        assert_eq!(c.url, "http://127.0.0.1:8080/x?y=1");
        assert_eq!(c.shown, "http://al%40ice:***@127.0.0.1:8080/x?y=1");
        // printf 'al@ice:p:ss' | base64
        assert_eq!(c.header, Some(("Authorization".into(), "Basic YWxAaWNlOnA6c3M=".into())));
        let user_only = split("http://token@h/");
        assert_eq!(user_only.header.unwrap().1, "Basic dG9rZW46", "curl sends the user and an empty password");
        assert_eq!(split("http://h/a@b").header, None);
    }

    #[test]
    fn a_given_authorization_header_wins_over_the_url() {
        let basic = split("http://u:p@h/").header;
        let given = vec![("authorization".to_string(), "Bearer t".to_string())];
        assert_eq!(with_header(given.clone(), &basic), given);
        assert_eq!(with_header(Vec::new(), &basic).len(), 1);
    }
}
