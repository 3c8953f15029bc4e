//! A `SKILL.md`'s front matter: the YAML block between the leading `---` lines, read into a JSON
//! object as written (every field kept, for `skills/get`), with the fields the Agent Skills format
//! requires checked: `name` (1-64 lowercase letters, digits and single inner hyphens, the skill
//! directory's name) and `description` (1-1,024 characters); `compatibility` at most 500
//! characters; `allowed-tools` a string of names or a list of them.

use serde_json::{Map, Value};

/// The longest description the format allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest skill name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The most front matter read, in bytes.
pub const MAX_FRONT_MATTER_BYTES: usize = 64 << 10;

/// What a `SKILL.md` says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontMatter {
    /// The skill's name.
    pub name: String,
    /// What it is for and when to use it.
    pub description: String,
    /// The tools its instructions use (`allowed-tools`), if it names any. It never grants a
    /// tool: cordon only narrows what is granted with it (docs/resources-prompts-skills.md).
    pub allowed_tools: Option<Vec<String>>,
    /// Every field as written.
    pub fields: Map<String, Value>,
}

/// Reads the front matter at the start of `text` (a `SKILL.md`), checking it names `dir_name`.
pub fn parse(text: &str, dir_name: &str) -> Result<FrontMatter, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Err("it does not start with front matter (a line `---`, YAML with `name` and `description`, and a line `---`)".into());
    };
    let mut yaml_len = None;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            yaml_len = Some(offset);
            break;
        }
        offset += line.len();
    }
    let Some(yaml_len) = yaml_len else {
        return Err("its front matter has no closing `---` line".into());
    };
    if yaml_len > MAX_FRONT_MATTER_BYTES {
        return Err(format!(
            "its front matter is {yaml_len} bytes, more than the {MAX_FRONT_MATTER_BYTES} cordon reads"
        ));
    }
    let value = super::bounded_yaml::read(&rest[..yaml_len])?;
    let Value::Object(fields) = value else {
        return Err(
            "its front matter is not a mapping of fields (`name: ...`, `description: ...`)".into(),
        );
    };
    let name = required_text(&fields, "name")?;
    check_name(&name)?;
    if name != dir_name {
        return Err(format!(
            "its name {name:?} is not its directory's name {dir_name:?}; the Agent Skills format asks that they be the same"
        ));
    }
    let description = required_text(&fields, "description")?;
    check_plain_text(&description, "description")?;
    let chars = description.chars().count();
    if chars == 0 || chars > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "its description has {chars} characters; it must have 1 to {MAX_DESCRIPTION_CHARS}"
        ));
    }
    if let Some(compatibility) = fields.get("compatibility") {
        match compatibility.as_str() {
            Some(text) if (1..=MAX_COMPATIBILITY_CHARS).contains(&text.chars().count()) => {}
            _ => {
                return Err(format!(
                    "its `compatibility` must be text of 1 to {MAX_COMPATIBILITY_CHARS} characters"
                ));
            }
        }
    }
    let allowed_tools = match fields.get("allowed-tools") {
        None | Some(Value::Null) => None,
        Some(Value::String(names)) => Some(names.split_whitespace().map(String::from).collect()),
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .map(|name| name.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
                .ok_or("its `allowed-tools` list holds something other than tool names")?,
        ),
        Some(_) => {
            return Err(
                "its `allowed-tools` must be tool names, space-separated or as a list".into(),
            );
        }
    };
    Ok(FrontMatter {
        name,
        description,
        allowed_tools,
        fields,
    })
}

/// Refuses characters that could make a description pose as other text where it is shown (the
/// agent's system prompt, a terminal): what the terminal sanitiser would escape in prose
/// (controls other than tab and newline, line and paragraph separators, bidirectional and other
/// invisible format characters).
fn check_plain_text(text: &str, key: &str) -> Result<(), String> {
    use crate::report::terminal_text::{is_unsafe, kept_in_lines};
    match text.chars().find(|&c| is_unsafe(c) && !kept_in_lines(c)) {
        Some(c) => Err(format!(
            "its `{key}` holds the character U+{:04X}; write it as plain text (tabs and newlines are fine)",
            c as u32
        )),
        None => Ok(()),
    }
}

fn required_text(fields: &Map<String, Value>, key: &str) -> Result<String, String> {
    match fields.get(key) {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(format!("its `{key}` is not text")),
        None => Err(format!("its front matter has no `{key}`")),
    }
}

/// A skill name: 1-64 characters of `a-z`, `0-9` and `-`, no hyphen first, last or twice in a row.
/// (The Agent Skills format also allows lowercase letters of other scripts; cordon keeps names
/// ASCII so they stand in URIs as written.)
pub fn check_name(name: &str) -> Result<(), String> {
    let fits = (1..=MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if fits {
        Ok(())
    } else {
        Err(format!(
            "{:?} is not a skill name: use 1 to {MAX_NAME_CHARS} of a-z, 0-9 and single inner hyphens",
            crate::report::text_cut::cut_chars(
                name,
                80,
                crate::report::text_cut::CutMark::Ellipsis
            )
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_kept_as_written_and_the_required_ones_checked() {
        let parsed = parse(
            "---\nname: report-format\ndescription: How reports are laid out.\nlicense: MIT\nmetadata:\n  version: \"1.0\"\nallowed-tools: read_file list_dir\n---\n# Body\n",
            "report-format",
        )
        .unwrap();
        assert_eq!(parsed.name, "report-format");
        assert_eq!(parsed.fields["metadata"]["version"], "1.0");
        assert_eq!(parsed.fields["license"], "MIT");
        assert_eq!(
            parsed.allowed_tools.unwrap(),
            vec!["read_file".to_string(), "list_dir".to_string()]
        );
        let listed = parse(
            "---\r\nname: a\r\ndescription: d\r\nallowed-tools: [x, y]\r\n---\r\n",
            "a",
        )
        .unwrap();
        assert_eq!(listed.allowed_tools.unwrap().len(), 2);
    }

    #[test]
    fn what_the_format_forbids_is_refused_with_the_reason() {
        for (text, dir, why) in [
            ("# no front matter", "a", "does not start"),
            ("---\nname: a\ndescription: d\n", "a", "no closing"),
            ("---\n- a\n---\n", "a", "not a mapping"),
            ("---\ndescription: d\n---\n", "a", "no `name`"),
            ("---\nname: a\n---\n", "a", "no `description`"),
            (
                "---\nname: a\ndescription: \"\"\n---\n",
                "a",
                "0 characters",
            ),
            (
                "---\nname: Big\ndescription: d\n---\n",
                "Big",
                "not a skill name",
            ),
            (
                "---\nname: a--b\ndescription: d\n---\n",
                "a--b",
                "not a skill name",
            ),
            (
                "---\nname: a\ndescription: d\n---\n",
                "b",
                "not its directory's",
            ),
            (
                "---\nname: a\ndescription: d\nallowed-tools: 3\n---\n",
                "a",
                "allowed-tools",
            ),
            ("---\nname: [a\n---\n", "a", "not YAML"),
        ] {
            let err = parse(text, dir).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
