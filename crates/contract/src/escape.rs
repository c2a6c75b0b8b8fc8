//! Bytes shown as text, every byte visible and exact: how a rule's
//! description quotes its body, and how a check's report shows what a server
//! sent.

/// The first `limit` bytes, printable ASCII as is, everything else escaped
/// (`\n`, `\r`, `\t`, `\\`, `\xNN`), so every byte is visible and exact.
pub fn escape(bytes: &[u8], limit: usize) -> String {
    let mut out = String::new();
    for &b in bytes.iter().take(limit) {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    if bytes.len() > limit {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_shows_every_byte() {
        assert_eq!(escape(b"Hello, World!\n", 200), "Hello, World!\\n");
        assert_eq!(escape(b"a\\b\x00\xc3\xa9", 200), "a\\\\b\\x00\\xc3\\xa9");
        assert_eq!(escape(b"abcdef", 3), "abc…");
    }
}
