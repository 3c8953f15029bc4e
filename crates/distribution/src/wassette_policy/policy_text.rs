//! Checks on a policy's text before (and beside) its parse: nesting bounded before the YAML
//! parser's quadratic time, YAML tags refused (a tag changes what a value means to a reader that
//! honours it), and memory numbers with a leading zero refused (octal to YAML 1.1 readers).

/// How deeply a policy may nest `[` and `{`: a real one nests three or four levels, and the YAML
/// parser takes time that grows with the square of the depth.
const MAX_POLICY_NESTING: usize = 64;

/// Refuses a policy nested deeper than [`MAX_POLICY_NESTING`] before it is parsed.
pub(super) fn check_nesting(text: &str) -> Result<(), String> {
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
pub(super) fn check_memory_numbers(text: &str) -> Result<(), String> {
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
/// value means to a reader that honours it (`!!binary QVBJX0tFWQ==` is `API_KEY` to PyYAML),
/// and cordon reads plain values only.
pub(super) fn check_no_tags(text: &str) -> Result<(), String> {
    fn tagged(value: &serde_yaml::Value) -> Option<String> {
        match value {
            serde_yaml::Value::Tagged(tagged) => Some(tagged.tag.to_string()),
            serde_yaml::Value::Sequence(items) => items.iter().find_map(tagged),
            serde_yaml::Value::Mapping(map) => map
                .iter()
                .find_map(|(key, value)| tagged(key).or_else(|| tagged(value))),
            _ => None,
        }
    }
    // The YAML reader resolves the core schema's own tags (`!!binary` to the text it carries)
    // without keeping them, so those are found in the text: `!!` where a value may begin.
    let core_tag = text.match_indices("!!").find(|(at, _)| {
        text[..*at]
            .chars()
            .next_back()
            .is_none_or(|before| before.is_whitespace() || "[{,:-?".contains(before))
    });
    if let Some((at, _)) = core_tag {
        let tag: String = text[at..]
            .chars()
            .take_while(|c| !c.is_whitespace())
            .take(32)
            .collect();
        return Err(format!(
            "it tags a value ({tag}); a tag changes what a value means to a reader that honours it, and cordon reads plain values only: write the value out"
        ));
    }
    let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|err| err.to_string())?;
    match tagged(&value) {
        Some(tag) => Err(format!(
            "it tags a value ({tag}); a tag changes what a value means to a reader that honours it, and cordon reads plain values only: write the value out"
        )),
        None => Ok(()),
    }
}
