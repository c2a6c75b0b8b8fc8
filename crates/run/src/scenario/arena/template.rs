//! The Mustache subset the-benchmarker's per-language Dockerfile templates
//! use: `{{name}}` and `{{{name}}}` (dotted names, `.` for the current item,
//! `list.length`), sections `{{#name}}…{{/name}}` over a list, a table or a
//! true value, and inverted sections `{{^name}}…{{/name}}`. No partials, no
//! lambdas, no escaping (a Dockerfile is not HTML). Written here because no
//! Mustache crate is in the lock file and the templates need only this.

use serde_json::Value;

/// `template` rendered with `context`; an unclosed section is an error naming it.
pub fn render(template: &str, context: &Value) -> Result<String, String> {
    let mut out = String::new();
    section(template, &mut vec![context.clone()], &mut out)?;
    Ok(out)
}

fn section(text: &str, stack: &mut Vec<Value>, out: &mut String) -> Result<(), String> {
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let (tag, tail) = if let Some(inner) = after.strip_prefix('{') {
            let end = inner.find("}}}").ok_or("an unclosed {{{")?;
            (&inner[..end], &inner[end + 3..])
        } else {
            let end = after.find("}}").ok_or("an unclosed {{")?;
            (&after[..end], &after[end + 2..])
        };
        let tag = tag.trim();
        match tag.chars().next() {
            Some(kind @ ('#' | '^')) => {
                let name = tag[1..].trim();
                let close = format!("{{{{/{name}}}}}");
                let end = tail.find(&close).ok_or_else(|| format!("section {name} is never closed"))?;
                let (body, after_close) = (&tail[..end], &tail[end + close.len()..]);
                let value = lookup(stack, name);
                if kind == '^' {
                    if !truthy(&value) {
                        section(body, stack, out)?;
                    }
                } else if let Value::Array(items) = &value {
                    for item in items {
                        stack.push(item.clone());
                        section(body, stack, out)?;
                        stack.pop();
                    }
                } else if truthy(&value) {
                    stack.push(value);
                    section(body, stack, out)?;
                    stack.pop();
                }
                rest = after_close;
                continue;
            }
            Some('!') => {}
            _ => out.push_str(&scalar(&lookup(stack, tag))),
        }
        rest = tail;
    }
    out.push_str(rest);
    Ok(())
}

/// `name` looked up from the innermost context out; `.` is the innermost.
fn lookup(stack: &[Value], name: &str) -> Value {
    if name == "." {
        return stack.last().cloned().unwrap_or(Value::Null);
    }
    let mut parts = name.split('.');
    let first = parts.next().unwrap_or_default();
    let Some(mut value) = stack.iter().rev().find_map(|v| v.get(first)).cloned() else {
        return Value::Null;
    };
    for part in parts {
        value = match (&value, part) {
            (Value::Array(items), "length") => Value::from(items.len()),
            _ => value.get(part).cloned().unwrap_or(Value::Null),
        };
    }
    value
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Array(items) => !items.is_empty(),
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::Object(_) => true,
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_lists_inverted_and_lengths_render_as_mustache_does() {
        let ctx = serde_json::json!({"language": {"version": "1.25"}, "files": [{"source": ".", "target": "."}],
                                     "deps": ["gcc", "make"], "command": "/go/bin/app"});
        let t = "{{#language.version}}FROM golang:{{{.}}}{{/language.version}}{{^language.version}}FROM x{{/language.version}}\n\
                 {{#files}}COPY '{{source}}' '{{target}}'\n{{/files}}{{#deps.length}}n={{deps.length}}\n{{/deps.length}}\
                 {{#deps}}RUN install {{.}}\n{{/deps}}{{#absent}}never{{/absent}}ENTRYPOINT {{{command}}}";
        assert_eq!(
            render(t, &ctx).unwrap(),
            "FROM golang:1.25\nCOPY '.' '.'\nn=2\nRUN install gcc\nRUN install make\nENTRYPOINT /go/bin/app"
        );
        assert!(render("{{#x}}open", &ctx).unwrap_err().contains("section x is never closed"));
    }
}
