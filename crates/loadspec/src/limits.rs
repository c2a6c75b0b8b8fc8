//! The ranges a run is held to: every count, size and duration a user can
//! pass (docs/load.md "Limits"). Each is far beyond a sensible benchmark on
//! one machine and well below where memory or arithmetic breaks, so an
//! absurd value is one line of error before the run, never an abort or an
//! unbounded allocation in it. The load engine's `config::limits` is this module.

use crate::spec_error::{Field, SpecError};
use std::time::Duration;

/// `--connections` and `--max-connections` (one socket each).
pub const MAX_CONNECTIONS: usize = 1_000_000;
/// `--threads` (one event loop each).
pub const MAX_THREADS: usize = 1024;
/// `--pipeline`: requests written back to back per connection.
pub const MAX_PIPELINE: usize = 1_000_000;
/// `--requests-per-connection`: responses before a connection is replaced.
pub const MAX_REQUESTS_PER_CONNECTION: usize = 1_000_000_000;
/// `--streams`: concurrent HTTP/2 streams per connection.
pub const MAX_STREAMS: usize = 10_000;
/// `--rate`, requests per second in total.
pub const MAX_RATE_PER_S: f64 = 10_000_000.0;
/// `--requests`.
pub const MAX_REQUESTS: u64 = 1_000_000_000_000;
/// `--slow-log`: slowest requests kept.
pub const MAX_SLOW_LOG: usize = 100_000;
/// `--body` / `--body-file`.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// One pipelined batch as encoded (`--pipeline` × the request).
pub const MAX_BATCH_BYTES: usize = 256 * 1024 * 1024;
/// `-H` headers.
pub const MAX_HEADERS: usize = 100;
/// `--duration`, `--warmup`, `--timeout`, `--max-lag` (365 days).
pub const MAX_DURATION: Duration = stampede_schema::units::MAX_DURATION;
/// `--max-granularity`: a due request's longest wait for the generator's
/// wake-up. Past a second the open loop is no longer a schedule.
pub const MAX_GRANULARITY: Duration = Duration::from_secs(1);

/// Largest head or chunk-size line accepted before the response is called malformed.
/// The largest response head accepted, in every protocol: an HTTP/1.1 head,
/// an HTTP/2 header block (HEADERS and its CONTINUATION frames) or an
/// HTTP/3 HEADERS frame. Past it the response is malformed and the
/// connection is closed, so a server cannot grow the generator's memory.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Reads a file whole, refusing one larger than `cap` bytes: `/dev/zero`
/// or a wrong file is one line of error, not a process that grows until
/// the kernel kills it. The error says why, for the caller to prefix
/// with the flag or file.
pub fn read_capped(path: &std::path::Path, cap: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(cap as u64 + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() > cap {
        return Err(format!("larger than the maximum of {} MiB", cap >> 20));
    }
    Ok(bytes)
}

/// `field`'s value as a `usize`, which a count beyond the address space is not.
pub fn fits(field: Field, n: u64) -> Result<usize, SpecError> {
    usize::try_from(n).map_err(|_| SpecError::new(field, format!("{} {n} is too large", field.flag())))
}

/// `field`'s value is within `1..=max`.
pub fn in_range(field: Field, value: usize, max: usize) -> Result<(), SpecError> {
    let flag = field.flag();
    if value == 0 {
        return Err(SpecError::new(field, format!("{flag} must be at least 1")));
    }
    if value > max {
        return Err(SpecError::new(field, format!("{flag} {value} is above the maximum of {max}")));
    }
    Ok(())
}
