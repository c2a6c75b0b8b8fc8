//! The computations behind the contract's endpoints, kept apart from HTTP so
//! they can be tested against the contract's vectors directly: path-integer
//! parsing, the xorshift loop of `/cpu` and `/lock`, Fibonacci, and `/alloc`'s
//! churn of short-lived heap objects.

use std::hint::black_box;

use num_bigint::BigUint;

/// Size of each short-lived object `/alloc` makes.
const CHUNK_BYTES: usize = 256;

/// Reads `s` as one or more ASCII digits (leading zeros allowed); `None` for
/// anything else or a value above `max`, checked before each step so 64-bit
/// overflow cannot wrap into range.
pub fn parse_path_int(s: &str, max: u64) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |n, c| {
        let d = u64::from(c.checked_sub(b'0').filter(|d| *d <= 9)?);
        n.checked_mul(10)?.checked_add(d).filter(|v| *v <= max)
    })
}

/// The contract's xorshift loop from 0x9E3779B97F4A7C15; `<<` on u64 drops the
/// bits shifted out and `>>` on unsigned values is logical.
pub fn xorshift(iters: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// `1 2 … n`: decimal, single spaces, nothing after the last number.
pub fn count_text(n: u64) -> String {
    let mut out = String::new();
    for i in 1..=n {
        if i > 1 {
            out.push(' ');
        }
        out.push_str(&i.to_string());
    }
    out
}

/// `F0 F1 … Fn` (n + 1 numbers), exact at any size with `num-bigint`.
pub fn fib_text(n: u64) -> String {
    let mut out = String::new();
    let (mut a, mut b) = (BigUint::ZERO, BigUint::from(1u32));
    for i in 0..=n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&a.to_string());
        let next = &a + &b;
        a = std::mem::replace(&mut b, next);
    }
    out
}

/// Allocates about `kib` KiB as many small heap buffers, writes every byte of
/// each, holds them all in one list, then drops them all. `black_box` keeps the
/// optimiser from proving the buffers unused and removing the allocations.
pub fn churn(kib: u64) {
    let count = kib as usize * 1024 / CHUNK_BYTES;
    let mut chunks: Vec<Vec<u8>> = Vec::with_capacity(count);
    for i in 0..count {
        let chunk: Vec<u8> = (0..CHUNK_BYTES).map(|j| (i + j) as u8).collect();
        chunks.push(black_box(chunk));
    }
    black_box(&mut chunks);
    drop(chunks);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_matches_contract_vectors() {
        let vectors = [
            (0, 11400714819323198485),
            (1, 15860402102123842989),
            (2, 7273575876580499574),
            (10, 10344392119048899982),
            (1000, 6248290529083013365),
            (100000, 16046154385989997852),
        ];
        for (iters, want) in vectors {
            assert_eq!(xorshift(iters), want, "iters = {iters}");
        }
    }

    #[test]
    fn fib_lists_f0_to_fn_exactly() {
        assert_eq!(fib_text(0), "0");
        assert_eq!(fib_text(10), "0 1 1 2 3 5 8 13 21 34 55");
        let text = fib_text(4000);
        let numbers: Vec<&str> = text.split(' ').collect();
        assert_eq!(numbers.len(), 4001);
        assert_eq!(numbers[4000].len(), 836);
        assert!(numbers[4000].ends_with("3025993715274875"));
    }

    #[test]
    fn count_has_single_spaces_and_no_trailing_space() {
        assert_eq!(count_text(0), "");
        assert_eq!(count_text(5), "1 2 3 4 5");
    }

    #[test]
    fn path_integers_follow_contract() {
        const MAX: u64 = 2147483647;
        for (s, want) in [
            ("0", 0),
            ("5", 5),
            ("007", 7),
            ("2147483647", MAX),
            ("0002147483647", MAX),
        ] {
            assert_eq!(parse_path_int(s, MAX), Some(want), "{s:?}");
        }
        for s in [
            "",
            "-1",
            "+1",
            "1a",
            " 1",
            "1.0",
            "0x10",
            "2147483648",
            "18446744073709551616",
            "99999999999999999999999",
        ] {
            assert_eq!(parse_path_int(s, MAX), None, "{s:?}");
        }
    }

    #[test]
    fn churn_runs() {
        churn(0);
        churn(64);
    }
}
