//! The answers the contract prescribes, computed here rather than copied from
//! a server: the `/cpu` xorshift, the Fibonacci list and the counting list.
//! The checker must never learn its expectations from the thing it checks.

/// Starting value of the `/cpu` and `/lock` xorshift.
const XORSHIFT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

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

/// The body of `/api/fib/{n}`: `F0 … F(n-1)` as a JSON array of exact integers.
/// `n` is at most 90 by contract, and F89 fits in a `u64`.
pub fn fib_body(n: u32) -> String {
    let (mut a, mut b) = (0u64, 1u64);
    let mut items = Vec::with_capacity(n as usize);
    for _ in 0..n {
        items.push(a.to_string());
        (a, b) = (b, a.wrapping_add(b));
    }
    format!("[{}]", items.join(","))
}

/// The body of `/api/count/{n}`: `[1,2,…,n]`.
pub fn count_body(n: u32) -> String {
    let items: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!("[{}]", items.join(","))
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
    fn fib_starts_at_zero_and_ends_exactly_at_f89() {
        assert_eq!(fib_body(0), "[]");
        assert_eq!(fib_body(1), "[0]");
        assert_eq!(fib_body(10), "[0,1,1,2,3,5,8,13,21,34]");
        assert!(
            fib_body(90).ends_with(",1779979416004714189]"),
            "{}",
            fib_body(90)
        );
    }

    #[test]
    fn count_is_one_based() {
        assert_eq!(count_body(0), "[]");
        assert_eq!(count_body(3), "[1,2,3]");
        assert_eq!(count_body(10000).matches(',').count(), 9999);
    }
}
