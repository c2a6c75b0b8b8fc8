//! HTML escaping. Every string that came from a results file (app names, knob
//! values, reasons, command lines, anything a server sent) goes through
//! [`esc`] before it reaches the page, in text and in attributes alike, so a
//! hostile value shows as text and never runs.

/// Escapes text for HTML element content and quoted attribute values
/// (inline SVG included).
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than whitespace are not allowed in HTML.
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
        assert_eq!(esc("a\u{0}b"), "a\u{fffd}b");
    }
}
