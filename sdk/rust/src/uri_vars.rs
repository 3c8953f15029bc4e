//! The values of a URI template's variables in one URI, for a [`crate::ResourceTemplate`]'s
//! `read`: the template is matched as the host matches it (`{name}` holds no `/`, `?` or `#`;
//! `{+name}` holds anything; each at least one character).

use std::collections::{BTreeMap, HashSet};

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

/// The variables of `template` in `uri`, or `None` when `uri` is not one of its URIs. Each
/// (part, position) that cannot lead to a match is remembered, so a hostile URI cannot make the
/// search take longer than parts x length x length steps.
pub fn match_template(template: &str, uri: &str) -> Option<UriVars> {
    let parts = parts(template);
    let mut values = BTreeMap::new();
    let mut dead = HashSet::new();
    matches_from(&parts, 0, uri, 0, &mut values, &mut dead).then_some(UriVars { values })
}

fn matches_from(
    parts: &[Part<'_>],
    index: usize,
    uri: &str,
    at: usize,
    values: &mut BTreeMap<String, String>,
    dead: &mut HashSet<(usize, usize)>,
) -> bool {
    let Some(part) = parts.get(index) else {
        return at == uri.len();
    };
    if dead.contains(&(index, at)) {
        return false;
    }
    let rest = &uri[at..];
    let found = match part {
        Part::Literal(literal) => {
            rest.starts_with(literal)
                && matches_from(parts, index + 1, uri, at + literal.len(), values, dead)
        }
        Part::Variable { name, reserved } => {
            let limit = if *reserved {
                rest.len()
            } else {
                rest.find(['/', '?', '#']).unwrap_or(rest.len())
            };
            // The shortest value first: the literal after it anchors where it ends.
            let mut found = false;
            for end in (1..=limit).filter(|end| rest.is_char_boundary(*end)) {
                if matches_from(parts, index + 1, uri, at + end, values, dead) {
                    values.insert(name.to_string(), rest[..end].to_string());
                    found = true;
                    break;
                }
            }
            found
        }
    };
    if !found {
        dead.insert((index, at));
    }
    found
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

    #[test]
    fn a_hostile_uri_is_refused_without_searching_every_split() {
        let uri = format!("s://{}", ".".repeat(2000));
        assert!(match_template("s://{+a}.{+b}.{+c}.{+d}.end", &uri).is_none());
    }
}
