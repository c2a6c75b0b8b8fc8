//! How far each host's wall clock is from ours, measured over the same ssh
//! path the run uses. A single ssh session runs the hidden `stampede clock`,
//! which answers each line it reads with its CLOCK_REALTIME in nanoseconds;
//! of several pings the one with the shortest round trip is kept (it had the
//! least queueing), and the offset is the remote time minus the midpoint of
//! the round trip, uncertain by half the round trip. The offset translates
//! the agreed start instant into each host's own clock.

use crate::error::HostError;
use crate::ssh::{last_line, Ssh};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{SystemTime, UNIX_EPOCH};

/// The greeting `stampede clock` prints first, so the controller knows the
/// remote binary started and which version it is.
pub const GREETING: &str = "stampede-clock";

const PINGS: usize = 10;

/// One host's clock compared with ours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offset {
    /// Remote minus local, in nanoseconds (positive: the host is ahead).
    pub offset_ns: i64,
    /// The shortest round trip seen, in nanoseconds; the offset is uncertain by half of it.
    pub rtt_ns: u64,
}

pub fn now_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128)
}

/// The remote side (`stampede clock`): a greeting, then one timestamp per
/// line read, until stdin closes.
pub fn serve(input: impl BufRead, mut out: impl Write) -> std::io::Result<()> {
    writeln!(out, "{GREETING} {}", env!("CARGO_PKG_VERSION"))?;
    out.flush()?;
    for line in input.lines() {
        line?;
        writeln!(out, "{}", now_ns())?;
        out.flush()?;
    }
    Ok(())
}

/// Picks the best of (sent, remote, received) samples, all in nanoseconds.
pub fn estimate(samples: &[(i128, i128, i128)]) -> Option<Offset> {
    samples
        .iter()
        .filter(|(t0, _, t2)| t2 >= t0)
        .min_by_key(|(t0, _, t2)| t2 - t0)
        .map(|&(t0, t1, t2)| Offset { offset_ns: (t1 - (t0 + t2) / 2) as i64, rtt_ns: (t2 - t0) as u64 })
}

/// Measures `host`'s clock over one ssh session.
pub fn measure(ssh: &Ssh, host: &str) -> Result<Offset, HostError> {
    let mut cmd = ssh.stampede(host, &["clock".to_string()]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child =
        cmd.spawn().map_err(|e| HostError::Connect(format!("cannot start ssh: {e}; is openssh-client installed?")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let fail = |child: &mut std::process::Child| -> HostError {
        let _ = child.kill();
        let status = child.wait().ok().and_then(|s| s.code());
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        match status {
            Some(255) => HostError::Connect(format!("ssh exited 255: {}", last_line(&err))),
            Some(126) | Some(127) => HostError::Missing { path: ssh.remote_path.clone(), detail: last_line(&err) },
            Some(code) => {
                HostError::ClockProtocol(format!("`{} clock` exited {code}: {}", ssh.remote_path, last_line(&err)))
            }
            None => HostError::ClockProtocol("the ssh session ended without a greeting".into()),
        }
    };
    match lines.next() {
        Some(Ok(l)) if l.starts_with(GREETING) => {}
        Some(Ok(l)) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(HostError::Missing {
                path: ssh.remote_path.clone(),
                detail: format!("it answered {l:?} to `clock`; is it an older stampede?"),
            });
        }
        _ => return Err(fail(&mut child)),
    }
    let mut samples = Vec::with_capacity(PINGS);
    for _ in 0..PINGS {
        let t0 = now_ns();
        if writeln!(stdin, "ping").and_then(|_| stdin.flush()).is_err() {
            return Err(fail(&mut child));
        }
        let Some(Ok(reply)) = lines.next() else { return Err(fail(&mut child)) };
        let t2 = now_ns();
        let t1: i128 =
            reply.trim().parse().map_err(|_| HostError::ClockProtocol(format!("unexpected answer {reply:?}")))?;
        samples.push((t0, t1, t2));
    }
    drop(stdin);
    let _ = child.wait();
    estimate(&samples).ok_or_else(|| HostError::ClockProtocol("no usable sample".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_shortest_round_trip() {
        // Remote is 5 ms ahead; the first sample was delayed on the way back.
        let s = [(0, 5_000_000 + 100, 9_000_000), (10_000_000, 15_000_050, 10_000_100)];
        let o = estimate(&s).unwrap();
        assert_eq!(o.rtt_ns, 100);
        assert_eq!(o.offset_ns, 5_000_000);
    }

    #[test]
    fn serve_answers_each_line() {
        let mut out = Vec::new();
        serve(&b"a\nb\n"[..], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with(GREETING));
        let t: i128 = lines[1].parse().unwrap();
        assert!((now_ns() - t).abs() < 5_000_000_000);
    }
}
