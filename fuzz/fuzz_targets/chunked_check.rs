//! The checker's chunked-body decoder (`stampede check`, crates/check
//! wire.rs, through `stampede_check::fuzzing::chunked_body`) against the
//! fuzzer's bytes. The first byte picks the read size. Invariant: no panic
//! (a chunk size of 2^64-1 after a first chunk once overflowed), and a body
//! never larger than the checker's limit.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, wire)) = data.split_first() else { return };
    let read_len = if split == 0 { usize::MAX } else { usize::from(split) };
    if let Ok(len) = stampede_check::fuzzing::chunked_body(wire, read_len) {
        assert!(len <= 64 * 1024 * 1024, "a body of {len} bytes passed the limit");
    }
});
