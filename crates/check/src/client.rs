//! A small blocking HTTP/1.1 client made for verification rather than speed.
//! General-purpose clients hide exactly what the contract is about: whether a
//! header was present at all, whether the body was framed by `Content-Length`
//! or by chunked encoding, whether the connection was kept alive. This one
//! keeps the raw response head (names as sent, values as bytes), says how the
//! body was framed, and reuses one persistent connection the way a benchmark
//! client would, reconnecting only when the server closed it.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::time::{Duration, Instant, SystemTime};

use crate::h3::H3Conn;
use crate::request::Prepared;
use crate::target::Target;
use crate::wire::{exchange_on, io_phrase, Conn};

pub use crate::response::Response;
pub use crate::transport::{TransportError, HUNG_AFTER_TIMEOUTS};
pub use crate::wire::Framing;

/// One request and what came back.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The request line sent, e.g. `GET /values/-1 HTTP/1.1`.
    pub request_line: String,
    pub result: Result<Response, TransportError>,
}

impl Exchange {
    pub fn response(&self) -> Option<&Response> {
        self.result.as_ref().ok()
    }
}

/// Sends `GET` requests to one [`Target`] over a reused connection.
pub struct Client {
    target: Target,
    timeout: Duration,
    conn: Option<Conn>,
    /// Over HTTP/3: the connection, as `conn` is over HTTP/1.1.
    h3: Option<H3Conn>,
    timeouts_in_a_row: u32,
}

impl Client {
    /// `timeout` bounds each request from connect to the last body byte.
    pub fn new(target: Target, timeout: Duration) -> Client {
        Client { target, timeout, conn: None, h3: None, timeouts_in_a_row: 0 }
    }

    /// Sends `GET path` (a contract path such as `/plaintext`). A reused
    /// connection the server had closed meanwhile is retried once on a new one.
    pub fn get(&mut self, path: &str) -> Exchange {
        self.send(&Prepared::get(path))
    }

    /// Sends `request` (a rule's method, headers, body, framing and split
    /// writes), as [`Client::get`] does.
    pub fn send(&mut self, request: &Prepared) -> Exchange {
        let version = if self.target.http3.is_some() { "HTTP/3" } else { "HTTP/1.1" };
        let target = self.target.request_target(&request.path);
        let request_line = format!("{} {target} {version}", request.method);
        let shown = format!("{request_line}{}", request.detail);
        if self.timeouts_in_a_row >= HUNG_AFTER_TIMEOUTS {
            return Exchange { request_line: shown, result: Err(TransportError::Hung) };
        }
        if self.target.http3.is_some() && !request.is_plain_get() {
            let why = "over HTTP/3 the checker sends only GET without a body or headers; check this rule over HTTP/1.1";
            return Exchange { request_line: shown, result: Err(TransportError::NotSent(why.into())) };
        }
        let mut result = self.round_trip(&request_line, request, &target);
        if matches!(result, Err(TransportError::ClosedBeforeResponse)) {
            result = self.round_trip(&request_line, request, &target);
        }
        match &result {
            Err(TransportError::Timeout(_)) => self.timeouts_in_a_row += 1,
            _ => self.timeouts_in_a_row = 0,
        }
        Exchange { request_line: shown, result }
    }

    /// One attempt; the connection is dropped on error or when the response
    /// does not allow another request on it.
    fn round_trip(
        &mut self,
        request_line: &str,
        prepared: &Prepared,
        target: &str,
    ) -> Result<Response, TransportError> {
        if self.target.http3.is_some() {
            return self.round_trip_h3(request_line);
        }
        let deadline = Instant::now() + self.timeout;
        let reused = self.conn.is_some();
        if !reused {
            self.conn = Some(self.connect(deadline)?);
        }
        let conn = self.conn.as_mut().expect("connection was just ensured");
        let own_headers = format!(
            "Host: {}\r\nUser-Agent: stampede-check/{}\r\nAccept: */*\r\n",
            self.target.host_header(),
            env!("CARGO_PKG_VERSION")
        );
        let pieces = prepared.pieces(target, "HTTP/1.1", &own_headers);
        let sent_at = SystemTime::now();
        let start = Instant::now();
        let result = exchange_on(conn, &pieces, deadline, self.timeout).map(|(head, body, framing)| Response {
            version_minor: head.version_minor,
            status: head.status,
            reason: head.reason,
            headers: head.headers,
            body,
            framing,
            sent_at,
            received_at: SystemTime::now(),
            elapsed: start.elapsed(),
            reused_connection: reused,
        });
        match &result {
            Ok(response) if response.keeps_alive() => {}
            Err(TransportError::ClosedBeforeResponse) if !reused => {
                // A fresh connection closed at once: not worth a retry.
                self.conn = None;
                return Err(TransportError::ClosedMidResponse("before answering, on a new connection".into()));
            }
            _ => self.conn = None,
        }
        result
    }

    /// One attempt over HTTP/3; the connection is dropped on error.
    fn round_trip_h3(&mut self, request_line: &str) -> Result<Response, TransportError> {
        let quic = self.target.http3.as_ref().expect("an HTTP/3 target");
        let reused = self.h3.is_some();
        if !reused {
            let addr = *self.target.addrs().first().ok_or_else(|| TransportError::Connect("no address".into()))?;
            self.h3 = Some(H3Conn::connect(quic, addr, self.timeout)?);
        }
        let path = request_line.split(' ').nth(1).unwrap_or("/");
        let uri = format!("https://{}{path}", self.target.host_header());
        let agent = concat!("stampede-check/", env!("CARGO_PKG_VERSION"));
        let conn = self.h3.as_mut().expect("connection was just ensured");
        let result = conn.get(&uri, agent, self.timeout).map(|r| Response { reused_connection: reused, ..r });
        match &result {
            Err(TransportError::ClosedBeforeResponse) if !reused => {
                self.h3 = None;
                Err(TransportError::ClosedMidResponse("before answering, on a new connection".into()))
            }
            Err(_) => {
                self.h3 = None;
                result
            }
            Ok(_) => result,
        }
    }

    fn connect(&self, deadline: Instant) -> Result<Conn, TransportError> {
        let mut last = TransportError::Connect("no address to try".into());
        for addr in self.target.addrs() {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(TransportError::Connect(format!(
                    "timed out after {}",
                    stampede_grpc::short_duration(self.timeout)
                )));
            }
            match TcpStream::connect_timeout(addr, remaining) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(Conn { stream, buf: Vec::new() });
                }
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => last = TransportError::Refused,
                Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                    last = TransportError::Connect(format!(
                        "timed out after {}",
                        stampede_grpc::short_duration(self.timeout)
                    ))
                }
                Err(e) => last = TransportError::Connect(io_phrase(&e)),
            }
        }
        Err(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A server on 127.0.0.1:0 that plays a script: one entry per accepted
    /// connection, each the responses to write, one per request received,
    /// before closing. An empty entry holds the connection without answering.
    fn scripted(script: Vec<Vec<&'static [u8]>>) -> Target {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for responses in script {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 1024];
                if responses.is_empty() {
                    while matches!(stream.read(&mut chunk), Ok(n) if n > 0) {}
                }
                for response in responses {
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut chunk) {
                            Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                            _ => return,
                        }
                    }
                    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
                    buf.drain(..end + 4);
                    stream.write_all(response).unwrap();
                }
            }
        });
        Target::parse(&format!("http://127.0.0.1:{port}")).unwrap()
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

    #[test]
    fn chunked_body_with_extensions_and_trailers_is_decoded() {
        let target = scripted(vec![vec![
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8;ext=1\r\n, World!\r\n0\r\nX-T: 1\r\n\r\n",
        ]]);
        let response = Client::new(target, Duration::from_secs(5)).get("/plaintext").result.unwrap();
        assert_eq!(response.body, b"Hello, World!");
        assert_eq!(response.framing, Framing::Chunked);
    }

    #[test]
    fn unframed_body_is_read_until_close() {
        let target = scripted(vec![vec![b"HTTP/1.1 404 Not Found\r\nServer: x\r\n\r\nnot here"]]);
        let response = Client::new(target, Duration::from_secs(5)).get("/nope").result.unwrap();
        assert_eq!((response.status, response.body.as_slice()), (404, b"not here".as_slice()));
        assert_eq!(response.framing, Framing::Unframed);
        assert_eq!(response.header("server").as_deref(), Some("x"));
    }

    /// Form alone never fails an answer (issue #34): a status line without a
    /// reason phrase, header names in any case and a body on a 404 are read
    /// as they are, and the rules judge status, headers and body by value.
    #[test]
    fn no_reason_phrase_lower_case_names_and_a_body_on_404_are_read_as_valid() {
        let target = scripted(vec![vec![
            b"HTTP/1.1 404 \r\ncontent-length: 9\r\nSERVER: x\r\n\r\nnot found",
            b"HTTP/1.1 200\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok",
        ]]);
        let mut client = Client::new(target, Duration::from_secs(5));
        let missing = client.get("/nope").result.unwrap();
        assert_eq!((missing.status, missing.body.as_slice()), (404, b"not found".as_slice()));
        assert_eq!((missing.framing.clone(), missing.header("Server").as_deref()), (Framing::Length(9), Some("x")));
        let ok = client.get("/plaintext").result.unwrap();
        assert_eq!(
            (ok.status, ok.reason.as_str(), ok.header("Content-Type").as_deref()),
            (200, "", Some("text/plain"))
        );
        assert!(ok.reused_connection);
    }

    #[test]
    fn connection_is_reused_and_silently_closed_ones_are_retried() {
        // Connection 1 answers twice then closes without saying so;
        // connection 2 answers the retried third request.
        let target = scripted(vec![vec![OK, OK], vec![OK]]);
        let mut client = Client::new(target, Duration::from_secs(5));
        let reused: Vec<bool> = (0..3).map(|_| client.get("/json").result.unwrap().reused_connection).collect();
        assert_eq!(reused, [false, true, false]);
    }

    #[test]
    fn a_silent_server_times_out_then_counts_as_hung() {
        let target = scripted(vec![vec![], vec![]]);
        let mut client = Client::new(target, Duration::from_millis(200));
        assert_eq!(client.get("/sleep/0").result.unwrap_err(), TransportError::Timeout(Duration::from_millis(200)));
        assert!(matches!(client.get("/sleep/0").result, Err(TransportError::Timeout(_))));
        assert_eq!(client.get("/sleep/0").result.unwrap_err(), TransportError::Hung);
    }

    #[test]
    fn refused_connection_is_unreachable() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let target = Target::parse(&format!("http://127.0.0.1:{port}")).unwrap();
        let error = Client::new(target, Duration::from_secs(1)).get("/plaintext").result.unwrap_err();
        assert_eq!(error, TransportError::Refused);
        assert!(error.is_unreachable());
    }

    #[test]
    fn connection_close_and_http_1_0_end_the_connection() {
        let mut r = Response {
            version_minor: 1,
            status: 200,
            reason: "OK".into(),
            headers: vec![],
            body: vec![],
            framing: Framing::Length(0),
            sent_at: SystemTime::now(),
            received_at: SystemTime::now(),
            elapsed: Duration::ZERO,
            reused_connection: false,
        };
        assert!(r.keeps_alive());
        r.headers.push(("Connection".into(), b"Close".to_vec()));
        assert!(!r.keeps_alive());
        r.headers.clear();
        r.version_minor = 0;
        assert!(!r.keeps_alive());
        r.headers.push(("Connection".into(), b"keep-alive".to_vec()));
        assert!(r.keeps_alive());
        r.framing = Framing::Unframed;
        assert!(!r.keeps_alive());
    }
}
