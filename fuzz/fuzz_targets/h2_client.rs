//! The HTTP/2 client path (`stampede_load::fuzzing::h2_exchange`: a
//! connection's session with the runs' settings, one GET, and the server's
//! bytes after a valid preface, fed read by read) against the fuzzer's bytes.
//! The first byte picks the read size, so frames split across reads at every
//! offset are covered. Invariant: no panic (the exchange cannot block).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, server_bytes)) = data.split_first() else { return };
    let read_len = if split == 0 { usize::MAX } else { usize::from(split) };
    let _ = stampede_load::fuzzing::h2_exchange(server_bytes, read_len);
});
