//! Reading a `/fortunes` page back into rows. The page is the contract's
//! fixed table (apps/CONTRACT.md): one `<tr><td>{id}</td><td>{message}</td></tr>`
//! per fortune, whitespace between tags allowed. Only that shape needs
//! reading, so this scans for the cells instead of building a DOM: the raw
//! text of each cell is kept, so that the escaping rule sees exactly what a
//! browser would have parsed as markup, and the other rules see it decoded
//! (html-escape's entity table, which knows `&#34;` and `&quot;` alike).

/// The message TechEmpower's test adds at request time (id 0).
pub const ADDED: &str = "Additional fortune added at request time.";

/// One table row: its first two cells as they are on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct RawRow {
    pub id: String,
    pub message: String,
}

impl RawRow {
    /// The id as a number and the message with its entities decoded.
    pub fn decoded(&self) -> Result<(i32, String), String> {
        let id = self.id.trim().parse().map_err(|_| format!("id cell {:?} is not a number", self.id))?;
        Ok((id, html_escape::decode_html_entities(&self.message).into_owned()))
    }
}

/// The rows of the page with `<td>` cells (the header row has `<th>`).
pub fn rows(page: &str) -> Vec<RawRow> {
    // ASCII lower-casing keeps every byte offset, so positions found in
    // `lower` index `page` too.
    let lower = page.to_ascii_lowercase();
    let mut rows = Vec::new();
    let starts: Vec<usize> = lower.match_indices("<tr").map(|(i, _)| i).collect();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(page.len());
        let cells = cells(&page[start..end], &lower[start..end]);
        if cells.len() >= 2 {
            rows.push(RawRow { id: cells[0].to_string(), message: cells[1].to_string() });
        }
    }
    rows
}

/// The contents of each `<td …>…</td>` in one row.
fn cells<'a>(row: &'a str, lower: &str) -> Vec<&'a str> {
    let mut cells = Vec::new();
    let mut at = 0;
    while let Some(open) = lower[at..].find("<td").map(|i| at + i) {
        let Some(body) = lower[open..].find('>').map(|i| open + i + 1) else { break };
        let close = lower[body..].find("</td").map(|i| body + i).unwrap_or(row.len());
        cells.push(&row[body..close]);
        at = close;
        if at >= row.len() {
            break;
        }
    }
    cells
}

/// Why a raw message is not safely escaped: each character HTML gives
/// meaning to, left as it is, in order.
pub fn unescaped(raw: &str) -> impl Iterator<Item = char> + '_ {
    raw.chars().filter(|c| matches!(c, '<' | '>' | '"' | '\''))
}

/// Tags TechEmpower's fortunes parser ignores (toolset/test_types/fortune/
/// fortune_html_parser.py), as this check does: a `<meta>`, a stylesheet, a
/// `<thead>`/`<tbody>` around the rows, and a `<script>` tag (a message that
/// was not escaped is `fortunes-escaped`'s failure, not this one's).
const IGNORED_TAGS: [&str; 5] = ["meta", "link", "script", "thead", "tbody"];

/// The page around the rows, as TechEmpower's verifier requires it: a
/// doctype, `<html><head><title>Fortunes</title></head><body><table>`, the
/// header row `<tr><th>id</th><th>message</th></tr>`, then only rows of two
/// cells, and the closing tags. Attributes and whitespace between tags are
/// free; tag names are compared in any case. `Err` names the first tag
/// that departs, counted from 1.
pub fn structure(page: &str) -> Result<(), String> {
    let mut tags: Vec<(String, &str)> = Vec::new();
    let mut rest = page;
    while let Some(open) = rest.find('<') {
        let text = rest[..open].trim();
        let Some(close) = rest[open..].find('>').map(|i| open + i) else { break };
        let inner = rest[open + 1..close].trim();
        let closing = inner.starts_with('/');
        let mut words = inner.split(|c: char| c.is_ascii_whitespace() || c == '/' && !closing);
        let name = words.next().unwrap_or_default().to_ascii_lowercase();
        let bare = name.trim_start_matches('/');
        if !IGNORED_TAGS.contains(&bare) {
            let name =
                if name == "!doctype" { format!("!doctype {}", inner[8..].trim().to_ascii_lowercase()) } else { name };
            tags.push((name, text));
        }
        rest = &rest[close + 1..];
    }
    let head = [
        "!doctype html",
        "html",
        "head",
        "title",
        "/title",
        "/head",
        "body",
        "table",
        "tr",
        "th",
        "/th",
        "th",
        "/th",
        "/tr",
    ];
    let row = ["tr", "td", "/td", "td", "/td", "/tr"];
    let tail = ["/table", "/body", "/html"];
    let rows = tags.len().saturating_sub(head.len() + tail.len()) / row.len();
    let expected: Vec<&str> =
        head.iter().chain(row.iter().cycle().take(rows * row.len())).chain(tail.iter()).copied().collect();
    for (n, want) in expected.iter().enumerate() {
        let found = tags.get(n).map(|(t, _)| t.as_str());
        if found != Some(*want) {
            let found = found.map_or_else(|| "the end of the page".to_string(), |t| format!("<{t}>"));
            return Err(format!("tag {}: expected <{want}>, found {found}", n + 1));
        }
    }
    if let Some((extra, _)) = tags.get(expected.len()) {
        return Err(format!("tag {}: <{extra}> after </html>", expected.len() + 1));
    }
    // The text before each closing tag: the title's and the header cells'.
    for (n, want) in [(4, "Fortunes"), (10, "id"), (12, "message")] {
        if tags[n].1 != want {
            return Err(format!("<{}> holds {:?}, expected {want:?}", &tags[n].0[1..], tags[n].1));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\n<tr><th>id</th><th>message</th></tr>\n<tr><td>11</td><td>&lt;script&gt;alert(&#34;x&#34;);&lt;/script&gt;</td></tr>\n  <TR><td>12</td><td>フレームワークのベンチマーク</td></TR></table></body></html>";

    #[test]
    fn rows_are_read_raw_and_decoded() {
        let rows = rows(PAGE);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].message, "&lt;script&gt;alert(&#34;x&#34;);&lt;/script&gt;");
        assert_eq!(rows[0].decoded().unwrap(), (11, "<script>alert(\"x\");</script>".to_string()));
        assert_eq!(rows[1].decoded().unwrap(), (12, "フレームワークのベンチマーク".to_string()));
        assert_eq!(unescaped(&rows[0].message).next(), None);
    }

    #[test]
    fn the_page_structure_is_techempower_s() {
        assert_eq!(structure(PAGE), Ok(()));
        let spaced = PAGE.replace("<table>", "<table class=\"x\">\n<tbody>").replace("</table>", "</tbody></table>\n");
        assert_eq!(structure(&spaced), Ok(()));
        let no_doctype = PAGE.replace("<!DOCTYPE html>", "");
        assert_eq!(structure(&no_doctype).unwrap_err(), "tag 1: expected <!doctype html>, found <html>");
        let no_header = PAGE.replace("<tr><th>id</th><th>message</th></tr>", "");
        assert!(structure(&no_header).unwrap_err().starts_with("tag 10: expected <th>"), "{:?}", structure(&no_header));
        let title = PAGE.replace("<title>Fortunes</title>", "<title>Fortune</title>");
        assert_eq!(structure(&title).unwrap_err(), "<title> holds \"Fortune\", expected \"Fortunes\"");
        let raw_script = PAGE.replace("&lt;script&gt;alert(&#34;x&#34;);&lt;/script&gt;", "<script>alert(1)</script>");
        assert_eq!(structure(&raw_script), Ok(()));
    }

    #[test]
    fn markup_left_in_a_message_is_seen() {
        let page = "<table><tr><td>11</td><td><script>alert(\"x\");</script></td></tr></table>";
        let rows = rows(page);
        assert_eq!(rows[0].message, "<script>alert(\"x\");</script>");
        assert_eq!(unescaped(&rows[0].message).next(), Some('<'));
        assert_eq!(unescaped("it&#39;s").next(), None);
        assert_eq!(unescaped("it's").collect::<String>(), "'");
    }
}
