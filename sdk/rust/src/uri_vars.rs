//! The values of a URI template's variables in one URI, for a [`crate::ResourceTemplate`]'s
//! `read`: the template is matched as the host matches it (`{name}` holds no `/`, `?` or `#`;
//! `{+name}` holds anything; each at least one character).

use std::collections::BTreeMap;

/// The variables of a template, by name, as they were in the URI read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UriVars {
    values: BTreeMap<String, String>,
}

impl UriVars {
    /// The value of variable `name`, if the template has it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Every variable and its value.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

enum Part<'t> {
    Literal(&'t str),
    Variable { name: &'t str, reserved: bool },
}

fn parts(template: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let expression = &rest[open + 1..open + close];
        parts.push(match expression.strip_prefix('+') {
            Some(name) => Part::Variable {
                name,
                reserved: true,
            },
            None => Part::Variable {
                name: expression,
                reserved: false,
            },
        });
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    parts
}

/// The variables of `template` in `uri`, or `None` when `uri` is not one of its URIs.
pub fn match_template(template: &str, uri: &str) -> Option<UriVars> {
    let parts = parts(template);
    let mut values = BTreeMap::new();
    matches_from(&parts, uri, &mut values).then_some(UriVars { values })
}

fn matches_from(parts: &[Part<'_>], uri: &str, values: &mut BTreeMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(literal) => uri
            .strip_prefix(literal)
            .is_some_and(|after| matches_from(rest, after, values)),
        Part::Variable { name, reserved } => {
            let limit = if *reserved {
                uri.len()
            } else {
                uri.find(['/', '?', '#']).unwrap_or(uri.len())
            };
            // The shortest value first: the literal after it anchors where it ends.
            for end in (1..=limit).filter(|end| uri.is_char_boundary(*end)) {
                if matches_from(rest, &uri[end..], values) {
                    values.insert(name.to_string(), uri[..end].to_string());
                    return true;
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::match_template;

    #[test]
    fn variables_are_read_out_of_the_uri() {
        let vars = match_template("db://{table}/rows/{id}", "db://users/rows/42").unwrap();
        assert_eq!(vars.get("table"), Some("users"));
        assert_eq!(vars.get("id"), Some("42"));
        let vars = match_template("file:///data/{+path}", "file:///data/a/b.md").unwrap();
        assert_eq!(vars.get("path"), Some("a/b.md"));
        assert!(match_template("notes://{name}", "notes://a/b").is_none());
        assert!(match_template("notes://{name}", "notes://").is_none());
    }
}
