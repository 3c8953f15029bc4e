//! Checks on a policy's text before its parse: nesting bounded before the YAML parser's quadratic
//! time, YAML tags refused (a tag changes what a value means to a reader that honours it), and
//! memory numbers with a leading zero refused (octal to YAML 1.1 readers).

/// All the checks, in turn.
pub(super) fn check(text: &str) -> Result<(), String> {
    check_nesting(text)?;
    check_no_tags(text)?;
    check_memory_numbers(text)
}

/// How deeply a policy may nest `[` and `{`: a real one nests three or four levels, and the YAML
/// parser takes time that grows with the square of the depth.
const MAX_POLICY_NESTING: usize = 64;

/// Refuses a policy nested deeper than [`MAX_POLICY_NESTING`] before it is parsed.
fn check_nesting(text: &str) -> Result<(), String> {
    let mut depth = 0usize;
    for byte in text.bytes() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_POLICY_NESTING {
                    return Err(format!(
                        "it nests [ and {{ more than {MAX_POLICY_NESTING} levels deep, which no policy needs"
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Refuses a memory number written with a leading zero (`01000`, `0o1750`, `0x3e8`): YAML 1.1
/// readers take `01000` as octal (512), YAML 1.2 ones as 1000, so its size is not one reading.
fn check_memory_numbers(text: &str) -> Result<(), String> {
    for line in text.lines() {
        let Some((_, value)) = line.split_once("memory:") else {
            continue;
        };
        let value = value.trim().trim_matches(['"', '\'']);
        let mut digits = value.chars();
        if digits.next() == Some('0')
            && digits
                .next()
                .is_some_and(|c| c.is_ascii_digit() || "oOxXbB_".contains(c))
        {
            return Err(format!(
                "resources memory: {value} starts with 0, which YAML readers read as octal or as decimal; write it without the leading 0, with a unit (512Mi)"
            ));
        }
    }
    Ok(())
}

/// Refuses a policy with a YAML tag on any value (`!!binary`, `!custom`): a tag changes what a
/// value means to a reader that honours it (`!!binary QVBJX0tFWQ==` is `API_KEY` to PyYAML), and
/// the YAML reader resolves the core schema's own tags without keeping them, so a `!` is looked
/// for where a value may begin (a `!` so placed inside a quoted text refuses the policy too).
fn check_no_tags(text: &str) -> Result<(), String> {
    let tag_at = text.match_indices('!').find(|(at, _)| {
        text[..*at]
            .chars()
            .next_back()
            .is_none_or(|before| before.is_whitespace() || "[{,:-?".contains(before))
    });
    let Some((at, _)) = tag_at else {
        return Ok(());
    };
    let tag: String = text[at..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .take(32)
        .collect();
    Err(format!(
        "it tags a value ({tag}); a tag changes what a value means to a reader that honours it, and cordon reads plain values only: write the value out"
    ))
}
