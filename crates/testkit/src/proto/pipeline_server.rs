//! An HTTP/1.1 server that checks pipelining. It waits for a whole batch of
//! `depth` requests before answering (a client that does not pipeline would
//! stall it), counts any moment with more than `depth` requests unanswered
//! (a client that overruns its window), and answers a batch in order: the
//! response at position k has status 200+k and a framing that changes with k
//! (Content-Length, chunked, no body, a larger body), all in one buffer
//! written in two pieces split mid-response, so the client must frame
//! back-to-back responses across reads.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::hostile::listen::Accepting;

#[derive(Clone, Copy)]
pub enum Behaviour {
    /// Answer every batch in full, at once.
    InOrder,
    /// Answer all but the last response of a batch at once, the last after this delay.
    LastLate(Duration),
    /// Answer the first k responses of each batch, the k-th with
    /// `Connection: close`, then close.
    CloseAfter(usize),
}

pub struct PipelineServer {
    pub addr: SocketAddr,
    /// Requests received.
    pub requests: Arc<AtomicU64>,
    /// Batches received whole before any of them was answered.
    pub full_batches: Arc<AtomicU64>,
    /// Times more than `depth` requests were waiting for an answer.
    pub overruns: Arc<AtomicU64>,
    _accepting: Accepting,
}

impl PipelineServer {
    pub fn start(depth: usize, behaviour: Behaviour) -> PipelineServer {
        let (requests, full_batches, overruns): (Arc<AtomicU64>, Arc<AtomicU64>, Arc<AtomicU64>) = Default::default();
        let (req, full, over) = (requests.clone(), full_batches.clone(), overruns.clone());
        let accepting =
            Accepting::start(Accepting::bind(), move |conn, _| serve(conn, depth, behaviour, &req, &full, &over));
        PipelineServer { addr: accepting.addr, requests, full_batches, overruns, _accepting: accepting }
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

/// The status of the response at position `k`: 2xx, distinct per position,
/// never 204 or 205 (which have no body whatever their headers say).
pub fn status(k: usize) -> u16 {
    if k < 4 {
        200 + k as u16
    } else {
        270 + k as u16
    }
}

/// The response at position `k` of a batch.
pub fn response(k: usize, close: bool) -> Vec<u8> {
    let conn = if close { "Connection: close\r\n" } else { "" };
    let status = status(k);
    match k % 4 {
        0 => format!("HTTP/1.1 {status} OK\r\n{conn}Content-Length: 5\r\n\r\nHello").into_bytes(),
        1 => {
            format!("HTTP/1.1 {status} OK\r\n{conn}Transfer-Encoding: chunked\r\n\r\n3\r\nHel\r\n2\r\nlo\r\n0\r\n\r\n")
                .into_bytes()
        }
        2 => format!("HTTP/1.1 {status} OK\r\n{conn}Content-Length: 0\r\n\r\n").into_bytes(),
        _ => format!("HTTP/1.1 {status} OK\r\n{conn}Content-Length: 1000\r\n\r\n{}", "x".repeat(1000)).into_bytes(),
    }
}

fn serve(
    mut conn: TcpStream,
    depth: usize,
    behaviour: Behaviour,
    requests: &AtomicU64,
    full: &AtomicU64,
    over: &AtomicU64,
) {
    let _ = conn.set_nodelay(true);
    // A final partial batch (under -n) is answered after a short quiet spell.
    let _ = conn.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = vec![0u8; 64 * 1024];
    let mut have = 0;
    let mut waiting = 0usize;
    loop {
        let n = match conn.read(&mut buf[have..]) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => 0,
            Err(_) => return,
        };
        have += n;
        while let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") {
            buf.copy_within(end + 4..have, 0);
            have -= end + 4;
            waiting += 1;
            requests.fetch_add(1, Ordering::Relaxed);
        }
        if waiting > depth {
            over.fetch_add(1, Ordering::Relaxed);
        }
        if waiting == 0 || (waiting < depth && n > 0) {
            continue;
        }
        if waiting >= depth {
            full.fetch_add(1, Ordering::Relaxed);
        }
        let answer = match behaviour {
            Behaviour::CloseAfter(k) => k.min(waiting),
            _ => waiting,
        };
        let mut out = Vec::new();
        for k in 0..answer {
            out.extend(response(k, matches!(behaviour, Behaviour::CloseAfter(c) if c == k + 1)));
        }
        let last = response(answer - 1, false).len();
        let written = match behaviour {
            Behaviour::LastLate(delay) => {
                let split = out.len() - last;
                let ok = conn.write_all(&out[..split]).is_ok();
                std::thread::sleep(delay);
                ok && conn.write_all(&out[split..]).is_ok()
            }
            _ => {
                let split = out.len() / 2 + 1;
                conn.write_all(&out[..split]).is_ok() && {
                    let _ = conn.flush();
                    conn.write_all(&out[split..]).is_ok()
                }
            }
        };
        if !written || matches!(behaviour, Behaviour::CloseAfter(_)) {
            return;
        }
        waiting = 0;
    }
}
