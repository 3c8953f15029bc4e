//! The patterns a Wassette policy's deny rules write for names (`AWS_*`, `*.example.com`): `*`
//! stands for any run of characters and `?` for one. A pattern with any other glob syntax
//! (`[...]`, `{a,b}`) is not read, and the caller treats it as matching every name: a deny that
//! cannot be read must not let anything through.

/// Whether `text` is a pattern rather than one name.
pub(super) fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '[', ']', '{', '}'])
}

/// Whether `pattern` has glob syntax beyond `*` and `?`, which is not read.
pub(super) fn is_unreadable(pattern: &str) -> bool {
    pattern.contains(['[', ']', '{', '}'])
}

/// Whether `pattern` (`*` and `?` only) matches all of `text`.
pub(super) fn matches(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    // Where the last `*` was, and the text position it is currently taken to end at.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                // Let the last `*` take one more character and try again from there.
                Some((star_p, star_t)) => {
                    star = Some((star_p, star_t + 1));
                    p = star_p + 1;
                    t = star_t + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_question_marks() {
        assert!(matches("AWS_*", "AWS_SECRET_ACCESS_KEY"));
        assert!(matches("AWS_*", "AWS_"));
        assert!(!matches("AWS_*", "XAWS_KEY"));
        assert!(matches("*.example.com", "a.b.example.com"));
        assert!(!matches("*.example.com", "example.com"));
        assert!(matches("a?c", "abc"));
        assert!(!matches("a?c", "ac"));
        assert!(matches("*_KEY*", "MY_KEY_2"));
        assert!(matches("**", ""));
        assert!(!matches("abc", "abcd"));
        assert!(is_pattern("A[BC]") && is_unreadable("A[BC]"));
        assert!(is_pattern("A*") && !is_unreadable("A*"));
    }
}
