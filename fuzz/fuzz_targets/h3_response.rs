//! The HTTP/3 response reader of a request stream
//! (`stampede_load::fuzzing::h3_exchange`: frames, QPACK header blocks,
//! limits) against the fuzzer's bytes. The first byte picks the read size,
//! so frame headers and blocks split at every offset are covered.
//! Invariant: no panic, and memory bounded by the header-block limit.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, stream_bytes)) = data.split_first() else { return };
    let read_len = if split == 0 { usize::MAX } else { usize::from(split) };
    let _ = stampede_load::fuzzing::h3_exchange(stream_bytes, read_len);
});
