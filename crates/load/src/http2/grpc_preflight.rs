//! Before a `--grpc` run: one real call on a blocking connection, with the
//! session code the run uses, so that a port that does not speak HTTP/2, a
//! server that is not gRPC (an HTTP 200 page, a 404, no gRPC content-type)
//! or one that does not implement the method is named in one line instead
//! of a run of failed calls. Any other status (a server answering some
//! calls with INTERNAL, say) is the run's to count, not a reason to stop.

use crate::config::LoadConfig;
use crate::http2::block;
use crate::http2::preflight::{read_before, Wire};
use crate::http2::session::{Ended, Session, Slot};
use crate::tls::TlsShared;
use stampede_grpc::{Code, Refusal};
use stampede_spec::error::LoadError;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Makes one call of the run's; `Err` says why the target cannot be loaded.
pub fn preflight(cfg: &LoadConfig, tls: Option<&TlsShared>, timeout: Duration) -> Result<(), LoadError> {
    let (addr, url) = (cfg.target.addr, &cfg.target.url);
    let answer = match tls {
        Some(tls) => {
            let mut stream = tls.connect_blocking(addr, url, timeout)?;
            let answer = call(&mut stream, cfg, timeout);
            stream.conn.send_close_notify();
            let _ = std::io::Write::flush(&mut stream);
            answer
        }
        None => TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| format!("connect failed: {e}"))
            .and_then(|mut tcp| call(&mut tcp, cfg, timeout)),
    };
    let call = cfg.grpc.as_ref().map_or("", |g| g.name.as_str());
    let (status, end) =
        answer.map_err(|why| LoadError::Config(format!("--grpc: {url} {}", Refusal::NotHttp2 { why })))?;
    if !end.is_grpc(status) {
        return Err(LoadError::Config(format!("--grpc: {url} {}", Refusal::not_grpc(call, status))));
    }
    if end.code == Some(Code::Unimplemented) {
        return Err(LoadError::Config(format!(
            "--call {call}: {url} answered UNIMPLEMENTED: it does not serve this method; check --call and the server"
        )));
    }
    Ok(())
}

/// The HTTP/2 exchange of one call: the answer's `:status` and what its
/// header blocks and messages said.
fn call(
    wire: &mut impl Wire,
    cfg: &LoadConfig,
    timeout: Duration,
) -> Result<(u16, crate::core::grpc_tally::CallEnd), String> {
    let deadline = Instant::now() + timeout;
    let late = || format!("no answer to one call within {timeout:?}");
    let t = &cfg.target;
    let mut request = Vec::new();
    block::encode(&mut request, &cfg.method, t.tls, &t.host_header, &t.path, &cfg.headers);
    let bodies = [cfg.body.clone()];
    let mut session = Session::carrying(true);
    let now = Instant::now();
    session.open(&request, &bodies, 0, Slot::new(now, now, None));
    let mut ended: Vec<(Slot, Ended)> = Vec::new();
    let mut first = true;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let sent = wire.tcp().set_write_timeout(Some(timeout)).and_then(|_| wire.write_all(&session.out));
        sent.and_then(|_| wire.flush()).map_err(|_| late())?;
        session.out.clear();
        if let Some((slot, how)) = ended.pop() {
            return match how {
                Ended::Response(status) => Ok((status, slot.call)),
                Ended::Reset => Err("the server reset the call's stream".into()),
                Ended::Unprocessed => Err("the server refused the call (GOAWAY)".into()),
            };
        }
        let n = read_before(wire, &mut chunk, deadline, &late)?;
        // A server's first frame is its SETTINGS (an HTTP/1.1 server's
        // `HTTP/1.1 400` is not a frame header of that type).
        if first && n >= 4 {
            first = false;
            if chunk[3] != crate::http2::frame::SETTINGS {
                return Err("no HTTP/2 handshake".into());
            }
        }
        session.rx_at = Instant::now();
        session.receive(&chunk[..n], &bodies, &mut ended).map_err(|e| format!("no HTTP/2 handshake: {}", e.0))?;
        session.gaps.clear();
    }
}
