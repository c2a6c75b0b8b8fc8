//! An HTTP/3 front (`quinn` + `h3`, UDP 127.0.0.1 port 0) for an HTTP/1.1
//! server on TCP: each request it receives is asked of the server behind it
//! on a new connection, and the answer (status, headers, body) is sent back
//! over HTTP/3. Put before the contract's test server (`crate::contract`),
//! it makes that server, and each of its faults, speak HTTP/3 without a
//! second copy of the contract.

use bytes::{Buf, Bytes};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;

pub struct H3Front {
    pub addr: SocketAddr,
    endpoint: quinn::Endpoint,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl H3Front {
    /// Serves HTTP/3 with `tls`, answering from the HTTP/1.1 server at `behind`.
    pub fn start(behind: SocketAddr, tls: Arc<rustls::ServerConfig>) -> H3Front {
        let (rt, endpoint) = super::h3_server::endpoint(tls);
        let addr = endpoint.local_addr().unwrap();
        let ep = endpoint.clone();
        let thread = std::thread::spawn(move || {
            rt.block_on(async move {
                while let Some(incoming) = ep.accept().await {
                    tokio::spawn(async move {
                        let Ok(conn) = incoming.await else { return };
                        let _ = serve(conn, behind).await;
                    });
                }
            });
        });
        H3Front { addr, endpoint, thread: Some(thread) }
    }

    pub fn url(&self) -> String {
        format!("https://localhost:{}", self.addr.port())
    }
}

impl Drop for H3Front {
    fn drop(&mut self) {
        self.endpoint.close(0u32.into(), b"done");
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(conn: quinn::Connection, behind: SocketAddr) -> Result<(), h3::error::ConnectionError> {
    let mut h3 = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await?;
    while let Some(resolver) = h3.accept().await? {
        tokio::spawn(async move {
            let Ok((req, mut stream)) = resolver.resolve_request().await else { return };
            while let Ok(Some(mut chunk)) = stream.recv_data().await {
                chunk.advance(chunk.remaining());
            }
            let target = req.uri().path_and_query().map_or("/".to_string(), |p| p.to_string());
            // The server behind blocks (it sleeps for /sleep): off the runtime's thread.
            let Ok(Some(Answer { status, headers, body })) =
                tokio::task::spawn_blocking(move || ask(behind, &target)).await
            else {
                stream.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                return;
            };
            let mut resp = http::Response::builder().status(status);
            for (name, value) in headers {
                resp = resp.header(name, value);
            }
            let Ok(resp) = resp.body(()) else { return };
            if stream.send_response(resp).await.is_ok() && stream.send_data(Bytes::from(body)).await.is_ok() {
                let _ = stream.finish().await;
            }
        });
    }
    Ok(())
}

/// What the server behind answered: its headers but those of HTTP/1.1's connection.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// `GET target` of the server at `behind`, on a connection of its own.
fn ask(behind: SocketAddr, target: &str) -> Option<Answer> {
    let mut tcp = TcpStream::connect(behind).ok()?;
    write!(tcp, "GET {target} HTTP/1.1\r\nHost: {behind}\r\n\r\n").ok()?;
    tcp.shutdown(Shutdown::Write).ok()?;
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).ok()?;
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .filter(|(n, _)| !matches!(n.as_str(), "connection" | "transfer-encoding" | "keep-alive"))
        .collect();
    Some(Answer { status, headers, body: raw[end + 4..].to_vec() })
}
