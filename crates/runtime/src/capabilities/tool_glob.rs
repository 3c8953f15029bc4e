//! Tool names as model APIs accept them, and tool-name globs, as hooks declare the tools they
//! watch and as the operator narrows a hook grant: `*` matches any run of characters, `?` any one
//! character, everything else itself.

/// OpenAI's rule for function names (which MCP and Anthropic clients accept too):
/// `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether any of `globs` matches `tool`; no globs means every tool.
pub fn any_matches(globs: &[String], tool: &str) -> bool {
    globs.is_empty()
        || globs
            .iter()
            .any(|glob| matches(glob.as_bytes(), tool.as_bytes()))
}

/// Whether one glob matches `name`. Linear in practice: a `*` retries from the last star only.
pub fn matches(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(b'?') => {
                p += 1;
                n += 1;
            }
            Some(c) if *c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|c| *c == b'*')
}

/// Whether `glob` is a well-formed tool-name glob: tool-name characters, `*` and `?`.
pub fn is_valid(glob: &str) -> bool {
    (1..=64).contains(&glob.len())
        && glob
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'*' | b'?'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_globs() {
        let cases = [
            ("read_*", "read_file", true),
            ("read_*", "write_file", false),
            ("*_file", "edit_file", true),
            ("grep", "grep", true),
            ("grep", "grepx", false),
            ("?rep", "grep", true),
            ("*", "anything", true),
            ("*", "", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("a*", "a", true),
            ("*a", "ba", true),
            ("*a", "bab", false),
        ];
        for (glob, tool, expected) in cases {
            assert_eq!(
                matches(glob.as_bytes(), tool.as_bytes()),
                expected,
                "{glob} vs {tool}"
            );
        }
        assert!(any_matches(&[], "x"));
        assert!(any_matches(&["a".into(), "x*".into()], "xy"));
        // Many stars against a long near-miss: answered without exponential backtracking.
        let many_stars = format!("{}b", "*a".repeat(30));
        assert!(!matches(
            many_stars.as_bytes(),
            "a".repeat(5_000).as_bytes()
        ));
    }

    #[test]
    fn valid_globs() {
        for ok in ["read_*", "*", "a-b?"] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in ["", "read file", "a/b", "é"] {
            assert!(!is_valid(bad), "{bad}");
        }
    }
}
