//! The bodies only code can state, which a contract file names instead of
//! spelling out: the space-separated counting list, the Fibonacci numbers
//! F(0)..F(n) exact at any size (arbitrary precision, F(4000) has 836
//! digits), and the `/cpu` xorshift. They are computed here rather than
//! copied from a server: the checker must never learn its expectations from
//! the thing it checks.

use num_bigint::BigUint;
use serde::Deserialize;

/// Starting value of the `/cpu` and `/lock` xorshift.
const XORSHIFT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// Largest `n` each generator accepts in a contract file: enough for any
/// sensible check, small enough that a typo cannot make the checker build a
/// gigabyte body.
pub const MAX_COUNT_N: u64 = 10_000_000;
pub const MAX_FIB_N: u64 = 20_000;
pub const MAX_XORSHIFT_N: u64 = 1_000_000_000;

/// A named generator, as written in a contract (`generate = { name = "fib", n = 4000 }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    /// `1 2 … n` (text, single spaces, nothing after the last number; empty for 0).
    Count,
    /// `F(0) F(1) … F(n)`, n+1 exact numbers (text, single spaces).
    Fib,
    /// `{"result":"<x>"}` after `n` xorshift rounds (JSON).
    Xorshift,
}

impl Generator {
    pub fn name(self) -> &'static str {
        match self {
            Generator::Count => "count",
            Generator::Fib => "fib",
            Generator::Xorshift => "xorshift",
        }
    }

    /// The largest `n` this generator accepts.
    pub fn max_n(self) -> u64 {
        match self {
            Generator::Count => MAX_COUNT_N,
            Generator::Fib => MAX_FIB_N,
            Generator::Xorshift => MAX_XORSHIFT_N,
        }
    }

    /// The body is JSON (compared as JSON) rather than exact text.
    pub fn is_json(self) -> bool {
        matches!(self, Generator::Xorshift)
    }

    /// The body for `n`.
    pub fn body(self, n: u64) -> Vec<u8> {
        match self {
            Generator::Count => count_text(n).into_bytes(),
            Generator::Fib => fib_text(n).into_bytes(),
            Generator::Xorshift => cpu_body(n).into_bytes(),
        }
    }
}

/// `x ^= x << 13; x ^= x >> 7; x ^= x << 17`, `iters` times, wrapping.
pub fn xorshift(iters: u64) -> u64 {
    let mut x = XORSHIFT_SEED;
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// The body of `/cpu/{iters}`: `{"result":"<x>"}`.
pub fn cpu_body(iters: u64) -> String {
    format!(r#"{{"result":"{}"}}"#, xorshift(iters))
}

/// `F(0) F(1) … F(n)` separated by single spaces, exact.
pub fn fib_text(n: u64) -> String {
    let mut out = String::new();
    let (mut a, mut b) = (BigUint::from(0u32), BigUint::from(1u32));
    for i in 0..=n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&a.to_str_radix(10));
        let next = &a + &b;
        a = std::mem::replace(&mut b, next);
    }
    out
}

/// `1 2 … n` separated by single spaces; empty for `n = 0`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xorshift_matches_the_contract_test_vectors() {
        for (iters, result) in [
            (0, 11400714819323198485u64),
            (1, 15860402102123842989),
            (2, 7273575876580499574),
            (10, 10344392119048899982),
            (1000, 6248290529083013365),
            (100000, 16046154385989997852),
        ] {
            assert_eq!(xorshift(iters), result, "iters = {iters}");
        }
        assert_eq!(cpu_body(0), r#"{"result":"11400714819323198485"}"#);
    }

    #[test]
    fn fib_lists_f0_to_fn_inclusive_and_exact() {
        assert_eq!(fib_text(0), "0");
        assert_eq!(fib_text(1), "0 1");
        assert_eq!(fib_text(10), "0 1 1 2 3 5 8 13 21 34 55");
        let f90 = fib_text(90);
        assert!(f90.ends_with(" 1779979416004714189 2880067194370816120"), "{f90}");
        let f4000 = fib_text(4000);
        let last = f4000.rsplit(' ').next().unwrap();
        assert_eq!(last.len(), 836, "F(4000) has 836 digits");
        assert!(last.starts_with("3990947343500442279208124809496091260079"), "{last}");
        assert!(last.ends_with("4798332467919613598667003025993715274875"), "{last}");
        assert_eq!(f4000.len(), 1_676_923);
        assert_eq!(f4000.split(' ').count(), 4001);
    }

    #[test]
    fn count_is_one_based_without_a_trailing_space() {
        assert_eq!(count_text(0), "");
        assert_eq!(count_text(5), "1 2 3 4 5");
        assert_eq!(count_text(100_000).matches(' ').count(), 99_999);
    }
}
