//! `/fortunes`' page: the rows read from the database plus the one added at
//! request time, sorted by message and rendered through an askama template
//! (templates/fortunes.html), whose HTML escaping keeps the `<script>` row
//! from coming back as markup. Kept apart from the database so the sorting
//! and escaping are tested without one.

use askama::Template;

/// The row the contract adds at request time, before sorting.
pub const ADDED_MESSAGE: &str = "Additional fortune added at request time.";

/// One row of the `fortune` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Fortune {
    pub id: i32,
    pub message: String,
}

#[derive(Template)]
#[template(path = "fortunes.html")]
struct FortunesPage<'a> {
    fortunes: &'a [Fortune],
}

/// Adds the request-time row, sorts by message (`str`'s `Ord` compares bytes,
/// which for UTF-8 is code-point order) and renders the page.
pub fn render(mut fortunes: Vec<Fortune>) -> Result<String, askama::Error> {
    fortunes.push(Fortune {
        id: 0,
        message: ADDED_MESSAGE.to_owned(),
    });
    fortunes.sort_by(|a, b| a.message.cmp(&b.message));
    FortunesPage {
        fortunes: &fortunes,
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fortune(id: i32, message: &str) -> Fortune {
        Fortune {
            id,
            message: message.to_owned(),
        }
    }

    #[test]
    fn rows_are_escaped_sorted_and_joined_by_the_added_one() {
        let page = render(vec![
            fortune(12, "フレームワークのベンチマーク"),
            fortune(1, "fortune: No such file or directory"),
            fortune(11, r#"<script>alert("x & 'y'");</script>"#),
            fortune(4, "A bad random number generator"),
            fortune(13, "\u{1F600} (U+1F600, a surrogate pair in UTF-16)"),
            fortune(14, "\u{FF01} (U+FF01, above every surrogate)"),
        ])
        .unwrap();
        assert!(page.starts_with(
            "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>"
        ));
        assert!(page.ends_with("</table></body></html>"), "{page}");
        assert!(!page.contains("<script>"), "{page}");
        // askama writes numeric character references.
        assert!(
            page.contains("&#60;script&#62;alert(&#34;x &#38; &#39;y&#39;&#34;);&#60;/script&#62;"),
            "{page}"
        );
        let ids: Vec<&str> = page
            .split("<tr><td>")
            .skip(1)
            .map(|row| row.split('<').next().unwrap())
            .collect();
        // '<' sorts before capitals, capitals before lower case, ASCII before
        // kana, U+FF01 before U+1F600 (code-point order, not UTF-16's).
        assert_eq!(ids, ["11", "4", "0", "1", "12", "14", "13"]);
        assert!(page.contains("<td>フレームワークのベンチマーク</td>"));
    }
}
