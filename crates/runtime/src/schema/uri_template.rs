//! The URI templates a plugin may declare for its resources: RFC 6570 levels 1 and 2 without
//! fragments, `{var}` (a value with no `/`, `?` or `#`) and `{+var}` (any value), between literal
//! text. Two expressions must have literal text between them, so a URI matches a template in one
//! way at most where it matters. Matching runs in time linear in the URI for each template part, so
//! a client cannot make it slow with a long URI.

/// The longest URI or URI template the host accepts.
pub const MAX_URI_BYTES: usize = 2048;
/// The most expressions one template may hold.
const MAX_EXPRESSIONS: usize = 16;

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// An expression: its variable, and whether it may hold reserved characters (`{+var}`).
    Variable {
        name: String,
        reserved: bool,
    },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `text`, or says what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > MAX_URI_BYTES {
            return Err(format!(
                "it is {} bytes, over the {MAX_URI_BYTES} a URI template may be",
                text.len()
            ));
        }
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                if rest.contains('}') {
                    return Err("it has a `}` with no `{` before it".into());
                }
                parts.push(Part::Literal(rest.to_string()));
                break;
            };
            if open > 0 {
                let literal = &rest[..open];
                if literal.contains('}') {
                    return Err("it has a `}` with no `{` before it".into());
                }
                parts.push(Part::Literal(literal.to_string()));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err("it has a `{` that is never closed".into());
            };
            let expression = &rest[open + 1..open + close];
            let (name, reserved) = match expression.strip_prefix('+') {
                Some(name) => (name, true),
                None => (expression, false),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "`{{{expression}}}` is not an expression cordon reads: use `{{name}}` or `{{+name}}` with letters, digits and `_`"
                ));
            }
            if matches!(parts.last(), Some(Part::Variable { .. })) {
                return Err(format!(
                    "`{{{expression}}}` follows another expression directly; put literal text between them"
                ));
            }
            parts.push(Part::Variable {
                name: name.to_string(),
                reserved,
            });
            rest = &rest[open + close + 1..];
        }
        let expressions = parts
            .iter()
            .filter(|part| matches!(part, Part::Variable { .. }))
            .count();
        if expressions > MAX_EXPRESSIONS {
            return Err(format!(
                "it has {expressions} expressions; a template may have at most {MAX_EXPRESSIONS}"
            ));
        }
        match parts.first() {
            Some(Part::Literal(scheme)) if has_scheme(scheme) => Ok(Self { parts }),
            _ => Err("it must begin with a URI scheme (`notes://`, `file:///`)".into()),
        }
    }

    /// The names of its variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Whether `uri` is one of the URIs this template names (every variable non-empty).
    pub fn matches(&self, uri: &str) -> bool {
        let bytes = uri.as_bytes();
        if bytes.len() > MAX_URI_BYTES {
            return false;
        }
        // Positions in `uri` the parts so far can end at.
        let mut reachable = vec![false; bytes.len() + 1];
        reachable[0] = true;
        for part in &self.parts {
            let mut next = vec![false; bytes.len() + 1];
            match part {
                Part::Literal(literal) => {
                    let literal = literal.as_bytes();
                    for start in 0..reachable.len() {
                        if reachable[start] && bytes[start..].starts_with(literal) {
                            next[start + literal.len()] = true;
                        }
                    }
                }
                Part::Variable { reserved, .. } => {
                    // A value is one or more bytes from a reachable position on, stopping at the
                    // first byte a simple expression may not hold.
                    let mut open = false;
                    for (index, byte) in bytes.iter().enumerate() {
                        open |= reachable[index];
                        if !reserved && matches!(byte, b'/' | b'?' | b'#') {
                            open = false;
                            continue;
                        }
                        if open {
                            next[index + 1] = true;
                        }
                    }
                }
            }
            reachable = next;
        }
        reachable[bytes.len()]
    }
}

/// Whether `text` begins with a URI scheme and its colon (`notes:`).
pub fn has_scheme(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::UriTemplate;

    fn matches(template: &str, uri: &str) -> bool {
        UriTemplate::parse(template).unwrap().matches(uri)
    }

    #[test]
    fn simple_and_reserved_expressions() {
        assert!(matches("notes://{name}", "notes://todo"));
        assert!(!matches("notes://{name}", "notes://a/b"));
        assert!(!matches("notes://{name}", "notes://"));
        assert!(matches("file:///data/{+path}", "file:///data/a/b.md"));
        assert!(matches("db://{table}/rows/{id}", "db://users/rows/42"));
        assert!(!matches("db://{table}/rows/{id}", "db://users/cols/42"));
        assert!(matches("x://{a}-{b}", "x://one-two-three"));
    }

    #[test]
    fn malformed_templates_say_why() {
        for (template, says) in [
            ("notes://{name", "never closed"),
            ("notes://name}", "no `{`"),
            ("notes://{a}{b}", "directly"),
            ("{name}", "scheme"),
            ("notes://{na-me}", "not an expression"),
            ("notes://{}", "not an expression"),
        ] {
            let err = UriTemplate::parse(template).unwrap_err();
            assert!(err.contains(says), "{template}: {err}");
        }
    }

    #[test]
    fn a_long_uri_does_not_take_long() {
        let template = UriTemplate::parse("x://{+a}.{+b}.{+c}.{+d}.end").unwrap();
        let uri = format!("x://{}", ".".repeat(2000));
        let started = std::time::Instant::now();
        assert!(!template.matches(&uri));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
