//! The `stampede.slow/1` file: a phase's slow requests beside results.json.
//!
//! Each phase of `stampede run` keeps about 1.5% of its requests with their
//! timestamps for `stampede explain`. Inline in results.json, as pretty JSON,
//! that was about 400 bytes a request and 94% of the file (149 MB for a
//! shootout of 30 runs of a few seconds): every reader parsed all of it, and
//! the writer rewrote it after each run. Here the same [`SlowRequest`]s are
//! written once, when their run ends, to one gzip file per phase, about 20
//! bytes a request; results.json names the file (`slow_log_file`) and keeps
//! a size that grows with the number of runs, not of requests.
//!
//! The format is declared here once, for the writer (`stampede run`) and
//! every reader ([`crate::document::read`], so `explain`, `report` and
//! `compare`); docs/results.md describes it field by field. It is hand-made
//! rather than a generic serialisation because its encoding is what makes it
//! small: timestamps are stored as differences (the next request's intended
//! time from the previous one's, each request's other times from its own
//! intended time, its wall clock from its monotonic clock), which are small
//! numbers, as variable-length integers; gzip (flate2) then squeezes the rest,
//! and `zcat` opens it. Every field round-trips exactly.

use std::io::{Read, Write};
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};

use crate::load::{LoadResult, SlowRequest};
use crate::run::{ResultsDoc, RunRecord};

/// The first bytes of a decompressed file: the format and its version.
pub const MAGIC: &[u8; 16] = b"stampede.slow/1\n";

/// The file name's ending: the file is a gzip stream.
pub const EXTENSION: &str = "slow.gz";

/// The most decompressed bytes read from one file: far above any real
/// phase's (the generator keeps at most 100,000 requests, under 6 MB), far
/// below what would exhaust memory on a corrupt or hostile file.
pub const MAX_DECODED_BYTES: u64 = 256 * 1024 * 1024;

/// Where a phase's slow requests are, as results.json records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SlowLogFile {
    /// A file name in the folder of results.json (no directory part).
    pub name: String,
    /// How many requests it holds.
    pub requests: u64,
}

/// Why a slow-request file could not be read; the caller names the file.
#[derive(Debug, thiserror::Error)]
pub enum SlowLogError {
    #[error("cannot read it: {0}")]
    Read(std::io::Error),
    #[error("it is not a stampede.slow/1 file (or it is corrupt or cut short)")]
    Format,
    #[error("it holds {found} requests where results.json says {expected}")]
    Count { found: u64, expected: u64 },
    #[error("the name {0:?} is not a plain file name in the results folder")]
    Name(String),
}

/// The file name of one phase's log: `<stem>.<phase>.slow.gz`.
pub fn file_name(stem: &str, phase: &str) -> String {
    format!("{stem}.{phase}.{EXTENSION}")
}

/// Encodes requests (any order is kept) as a complete gzip file.
pub fn encode(requests: &[SlowRequest]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(MAGIC.len() + 8 + requests.len() * 32);
    raw.extend_from_slice(MAGIC);
    raw.extend_from_slice(&(requests.len() as u64).to_le_bytes());
    let (mut prev_intended, mut prev_offset) = (0u64, 0u64);
    for r in requests {
        let offset = r.intended_unix_ns.wrapping_sub(r.intended_mono_ns);
        raw.extend_from_slice(&r.latency_us.to_bits().to_le_bytes());
        for diff in [
            r.intended_mono_ns.wrapping_sub(prev_intended),
            r.start_mono_ns.wrapping_sub(r.intended_mono_ns),
            r.end_mono_ns.wrapping_sub(r.start_mono_ns),
            r.ready_mono_ns.wrapping_sub(r.intended_mono_ns),
            offset.wrapping_sub(prev_offset),
            r.start_unix_ns.wrapping_sub(r.start_mono_ns).wrapping_sub(offset),
            r.end_unix_ns.wrapping_sub(r.end_mono_ns).wrapping_sub(offset),
        ] {
            varint(&mut raw, zigzag(diff));
        }
        varint(&mut raw, r.connection as u64);
        varint(&mut raw, r.status as u64);
        raw.push(r.connecting as u8);
        (prev_intended, prev_offset) = (r.intended_mono_ns, offset);
    }
    let mut gz = GzEncoder::new(Vec::with_capacity(raw.len() / 2), flate2::Compression::default());
    gz.write_all(&raw).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

/// Decodes a whole file, refusing anything that is not exactly one.
pub fn decode(bytes: &[u8]) -> Result<Vec<SlowRequest>, SlowLogError> {
    let mut raw = Vec::new();
    GzDecoder::new(bytes).take(MAX_DECODED_BYTES + 1).read_to_end(&mut raw).map_err(|_| SlowLogError::Format)?;
    if raw.len() as u64 > MAX_DECODED_BYTES || !raw.starts_with(MAGIC) {
        return Err(SlowLogError::Format);
    }
    let mut input = Reader { bytes: &raw[MAGIC.len()..] };
    let count = u64::from_le_bytes(input.take::<8>()?);
    // Each request takes at least 18 bytes: a count above that is corrupt.
    if count > input.bytes.len() as u64 / 18 {
        return Err(SlowLogError::Format);
    }
    let mut requests = Vec::with_capacity(count as usize);
    let (mut prev_intended, mut prev_offset) = (0u64, 0u64);
    for _ in 0..count {
        let latency_us = f64::from_bits(u64::from_le_bytes(input.take::<8>()?));
        let mut d = [0u64; 7];
        for slot in &mut d {
            *slot = unzigzag(input.varint()?);
        }
        let intended_mono_ns = prev_intended.wrapping_add(d[0]);
        let start_mono_ns = intended_mono_ns.wrapping_add(d[1]);
        let end_mono_ns = start_mono_ns.wrapping_add(d[2]);
        let offset = prev_offset.wrapping_add(d[4]);
        let connection = u32::try_from(input.varint()?).map_err(|_| SlowLogError::Format)?;
        let status = u16::try_from(input.varint()?).map_err(|_| SlowLogError::Format)?;
        let connecting = match input.take::<1>()? {
            [0] => false,
            [1] => true,
            _ => return Err(SlowLogError::Format),
        };
        requests.push(SlowRequest {
            latency_us,
            intended_unix_ns: intended_mono_ns.wrapping_add(offset),
            start_unix_ns: start_mono_ns.wrapping_add(offset).wrapping_add(d[5]),
            end_unix_ns: end_mono_ns.wrapping_add(offset).wrapping_add(d[6]),
            intended_mono_ns,
            start_mono_ns,
            end_mono_ns,
            connection,
            status,
            ready_mono_ns: intended_mono_ns.wrapping_add(d[3]),
            connecting,
        });
        (prev_intended, prev_offset) = (intended_mono_ns, offset);
    }
    if !input.bytes.is_empty() {
        return Err(SlowLogError::Format);
    }
    Ok(requests)
}

/// Writes a file whole (to a temporary name, then renamed), so a reader
/// never meets half of one.
pub fn write(path: &Path, requests: &[SlowRequest]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, encode(requests))?;
    std::fs::rename(&tmp, path)
}

/// Reads the file `log` names in `dir`, checking it holds what it says.
pub fn read(dir: &Path, log: &SlowLogFile) -> Result<Vec<SlowRequest>, SlowLogError> {
    let plain = Path::new(&log.name).file_name().is_some_and(|n| n == log.name.as_str());
    if !plain || log.name == ".." {
        return Err(SlowLogError::Name(log.name.clone()));
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(dir.join(&log.name)).map_err(SlowLogError::Read)?;
    file.take(MAX_DECODED_BYTES).read_to_end(&mut bytes).map_err(SlowLogError::Read)?;
    let requests = decode(&bytes)?;
    if requests.len() as u64 != log.requests {
        return Err(SlowLogError::Count { found: requests.len() as u64, expected: log.requests });
    }
    Ok(requests)
}

/// A run's phases that keep slow requests, by the name their file and
/// their field in results.json carry.
fn phases(run: &mut RunRecord) -> [(&'static str, Option<&mut LoadResult>); 3] {
    [("warmup", run.warmup.as_mut()), ("load", run.load.as_mut()), ("latency", run.latency.as_mut())]
}

/// Moves each phase's slow requests out of `run` into
/// `<stem>.<phase>.slow.gz` in `dir`, leaving `slow_log_file` naming it:
/// the writer calls this as each run ends, before results.json names it.
pub fn store(run: &mut RunRecord, dir: &Path, stem: &str) -> std::io::Result<()> {
    for (phase, load) in phases(run) {
        let Some(load) = load.filter(|l| !l.slow_requests.is_empty()) else { continue };
        let name = file_name(stem, phase);
        write(&dir.join(&name), &load.slow_requests)?;
        let requests = std::mem::take(&mut load.slow_requests).len() as u64;
        load.slow_log_file = Some(SlowLogFile { name, requests });
    }
    Ok(())
}

/// A slow-request file named by results.json that could not be read.
#[derive(Debug)]
pub struct Missing {
    /// Where results.json names it: `runs[3].latency.slow_log_file`.
    pub field: String,
    pub path: std::path::PathBuf,
    pub error: SlowLogError,
}

/// Reads back into `doc` every phase's slow requests that results.json
/// names in a file of `dir` (older files carry them inline, and keep them).
pub fn load(doc: &mut ResultsDoc, dir: &Path) -> Result<(), Missing> {
    for (i, run) in doc.runs.iter_mut().enumerate() {
        for (phase, load) in phases(run) {
            let Some(load) = load else { continue };
            let Some(log) = load.slow_log_file.as_ref().filter(|_| load.slow_requests.is_empty()) else { continue };
            load.slow_requests = read(dir, log).map_err(|error| Missing {
                field: format!("runs[{i}].{phase}.slow_log_file"),
                path: dir.join(&log.name),
                error,
            })?;
        }
    }
    Ok(())
}

fn zigzag(v: u64) -> u64 {
    let v = v as i64;
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> u64 {
    (v >> 1) ^ (v & 1).wrapping_neg()
}

/// LEB128: seven bits a byte, low first, the top bit set on all but the last.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], SlowLogError> {
        let (head, rest) = self.bytes.split_first_chunk::<N>().ok_or(SlowLogError::Format)?;
        self.bytes = rest;
        Ok(*head)
    }

    fn varint(&mut self) -> Result<u64, SlowLogError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let [b] = self.take::<1>()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(SlowLogError::Format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(i: u64) -> SlowRequest {
        let mono = 5_000_000_000 + i * 7_919_000 % 3_000_000_000;
        let unix = 1_764_000_000_000_000_000 + mono;
        SlowRequest {
            latency_us: 1234.5 + i as f64,
            intended_unix_ns: unix,
            start_unix_ns: unix + 10_000,
            end_unix_ns: unix + 1_244_500,
            intended_mono_ns: mono,
            start_mono_ns: mono + 10_000,
            end_mono_ns: mono + 1_244_500,
            connection: (i % 32) as u32,
            status: if i.is_multiple_of(5) { 0 } else { 200 },
            ready_mono_ns: if i.is_multiple_of(3) { 0 } else { mono + 4_000 },
            connecting: i.is_multiple_of(7),
        }
    }

    #[test]
    fn every_field_round_trips_in_order() {
        let mut requests: Vec<SlowRequest> = (0..1000).map(request).collect();
        requests.push(SlowRequest { latency_us: f64::NAN, end_unix_ns: u64::MAX, ..SlowRequest::default() });
        requests.push(SlowRequest::default());
        let back = decode(&encode(&requests)).unwrap();
        assert_eq!(back.len(), requests.len());
        for (a, b) in requests.iter().zip(&back) {
            assert_eq!(a.latency_us.to_bits(), b.latency_us.to_bits());
            assert_eq!(SlowRequest { latency_us: 0.0, ..*a }, SlowRequest { latency_us: 0.0, ..*b });
        }
        assert!(decode(&encode(&[])).unwrap().is_empty());
    }

    #[test]
    fn a_request_takes_a_small_fraction_of_its_json() {
        let requests: Vec<SlowRequest> = (0..10_000).map(request).collect();
        let json = serde_json::to_string_pretty(&requests).unwrap().len();
        let file = encode(&requests).len();
        assert!(file * 8 < json, "{file} bytes against {json} of JSON");
    }

    #[test]
    fn corrupt_cut_or_foreign_files_are_refused() {
        let good = encode(&(0..100).map(request).collect::<Vec<_>>());
        assert!(matches!(decode(&good[..good.len() / 2]), Err(SlowLogError::Format)));
        assert!(matches!(decode(b"{\"schema\":1}"), Err(SlowLogError::Format)));
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"stampede.slow/9\n\x01\0\0\0\0\0\0\0").unwrap();
        assert!(matches!(decode(&gz.finish().unwrap()), Err(SlowLogError::Format)));
    }

    #[test]
    fn a_name_with_a_directory_or_a_wrong_count_is_refused() {
        let dir = std::env::temp_dir().join(format!("stampede-slowlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let name = file_name("go-defaults-json-1", "load");
        write(&dir.join(&name), &[request(1), request(2)]).unwrap();
        assert_eq!(read(&dir, &SlowLogFile { name: name.clone(), requests: 2 }).unwrap().len(), 2);
        let err = read(&dir, &SlowLogFile { name: name.clone(), requests: 3 }).unwrap_err();
        assert!(matches!(err, SlowLogError::Count { found: 2, expected: 3 }), "{err}");
        for bad in ["../x.slow.gz", "/etc/passwd", "..", ""] {
            let err = read(&dir, &SlowLogFile { name: bad.into(), requests: 0 }).unwrap_err();
            assert!(matches!(err, SlowLogError::Name(_)), "{bad}: {err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
