//! Skills a plugin carries in its component: a top-level custom section named `cordon-skills`
//! holding JSON, `{"format": "cordon-skills/1", "files": [{"path": "NAME/FILE", "base64": ...}]}`,
//! one entry per file of every skill (`NAME/SKILL.md` among them). `cordon build` writes it from
//! the project's `skills/` folder ([`section_for_folder`], [`replace_section`]); loading reads it
//! in the pass that hashes the component (`section_scan.rs`), so the skills are covered by the
//! component's sha256 (a pin, the lock, a signature) like its code. A custom section is not code:
//! the component runs the same with it or without it.

use super::{MAX_SKILLS_PER_SOURCE, Skill, SkillFile, SkillOrigin};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The custom section's name.
pub const SECTION_NAME: &str = "cordon-skills";
/// The format written in it.
pub const FORMAT: &str = "cordon-skills/1";
/// The largest section read (one skill at its bound, base64-encoded, fits; every skill at its
/// bound would not, a real plugin's skills do).
pub const MAX_SECTION_BYTES: usize = 24 << 20;
/// The most files a plugin's skills may have together, counted before any is decoded.
pub const MAX_FILES_PER_PLUGIN: usize = 4096;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Payload {
    format: String,
    files: Vec<EmbeddedFile>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EmbeddedFile {
    path: String,
    base64: String,
}

/// The skills in section payload `bytes`, for plugin `plugin`; `Err` says what is wrong with it.
pub fn decode(bytes: &[u8], plugin: &str) -> Result<Vec<Skill>, String> {
    let payload: Payload = serde_json::from_slice(bytes).map_err(|err| {
        format!("its `{SECTION_NAME}` section is not what cordon build writes: {err}")
    })?;
    if payload.format != FORMAT {
        return Err(format!(
            "its `{SECTION_NAME}` section is in format {:?}; this cordon reads {FORMAT:?}",
            payload.format
        ));
    }
    if payload.files.len() > MAX_FILES_PER_PLUGIN {
        return Err(format!(
            "its skills have {} files, more than the {MAX_FILES_PER_PLUGIN} a plugin may carry",
            payload.files.len()
        ));
    }
    let mut by_skill: BTreeMap<String, Vec<SkillFile>> = BTreeMap::new();
    for file in payload.files {
        let Some((name, path)) = file.path.split_once('/') else {
            return Err(format!(
                "its skills section has a file {:?} outside any skill folder",
                file.path
            ));
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&file.base64)
            .map_err(|_| format!("its skills section's file {:?} is not base64", file.path))?;
        by_skill
            .entry(name.to_string())
            .or_default()
            .push(SkillFile::new(path.to_string(), bytes));
    }
    if by_skill.len() > MAX_SKILLS_PER_SOURCE {
        return Err(format!(
            "it carries {} skills, more than the {MAX_SKILLS_PER_SOURCE} a plugin may",
            by_skill.len()
        ));
    }
    by_skill
        .into_iter()
        .map(|(name, files)| {
            Skill::from_files(&name, files, SkillOrigin::Plugin(plugin.into()))
                .map_err(|reason| format!("its skill {name:?}: {reason}"))
        })
        .collect()
}

/// The section payload for the skills in `dir` (a project's `skills/`: one folder per skill),
/// each read and checked as the host will check it, so a build fails on what loading would refuse.
/// `Ok(None)` when there is no such folder or it holds no skill.
pub fn section_for_folder(dir: &Path) -> Result<Option<Vec<u8>>, String> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let found = super::folder::read_all(&[dir.to_path_buf()]);
    if let Some(reason) = found.left_out.first() {
        return Err(reason.clone());
    }
    if found.skills.is_empty() {
        return Ok(None);
    }
    let files = found
        .skills
        .iter()
        .flat_map(|skill| {
            skill.files.iter().map(|file| EmbeddedFile {
                path: format!("{}/{}", skill.name(), file.path),
                base64: base64::engine::general_purpose::STANDARD.encode(&file.bytes),
            })
        })
        .collect();
    let payload = serde_json::to_vec(&Payload {
        format: FORMAT.into(),
        files,
    })
    .map_err(|err| err.to_string())?;
    if payload.len() > MAX_SECTION_BYTES {
        return Err(format!(
            "the skills in {} take {} bytes in the component, more than the {MAX_SECTION_BYTES} cordon loads",
            dir.display(),
            payload.len()
        ));
    }
    Ok(Some(payload))
}

/// `component` with its `cordon-skills` section (if any) replaced by one holding `payload`, or
/// removed when `payload` is `None`. `Err` when the bytes are not a component cordon can walk.
pub fn replace_section(component: &[u8], payload: Option<&[u8]>) -> Result<Vec<u8>, String> {
    if component.len() < 8 || &component[..4] != b"\0asm" {
        return Err("it is not a WebAssembly component".into());
    }
    let mut out = component[..8].to_vec();
    let mut at = 8;
    while at < component.len() {
        let start = at;
        at += 1;
        let (size, leb_len) = read_leb(&component[at..]).ok_or("a section's size is unreadable")?;
        at += leb_len;
        let end = at
            .checked_add(usize::try_from(size).map_err(|_| "a section is too large")?)
            .filter(|end| *end <= component.len())
            .ok_or("a section runs past the end of the file")?;
        let body = &component[at..end];
        let ours = component[start] == 0
            && read_leb(body).is_some_and(|(len, n)| {
                body.get(n..n.saturating_add(len as usize)) == Some(SECTION_NAME.as_bytes())
            });
        if !ours {
            out.extend_from_slice(&component[start..end]);
        }
        at = end;
    }
    if let Some(payload) = payload {
        append_section(&mut out, SECTION_NAME, payload);
    }
    Ok(out)
}

/// Appends a custom section `name` holding `payload` to `component`.
pub fn append_section(component: &mut Vec<u8>, name: &str, payload: &[u8]) {
    let mut body = Vec::with_capacity(name.len() + payload.len() + 5);
    write_leb(name.len() as u64, &mut body);
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(payload);
    component.push(0);
    write_leb(body.len() as u64, component);
    component.extend_from_slice(&body);
}

fn write_leb(mut value: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// An unsigned LEB128 at the start of `bytes` (at most 5 bytes): its value and its length.
pub(crate) fn read_leb(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().enumerate().take(5) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_skills_round_trips_through_the_section() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("skills");
        std::fs::create_dir_all(dir.join("house-report/templates")).unwrap();
        std::fs::write(
            dir.join("house-report/SKILL.md"),
            "---\nname: house-report\ndescription: d\n---\nbody\n",
        )
        .unwrap();
        std::fs::write(dir.join("house-report/templates/t.bin"), [0u8, 159, 146]).unwrap();
        let payload = section_for_folder(&dir).unwrap().unwrap();
        let component = b"\0asm\x0d\x00\x01\x00\x01\x01\x00".to_vec();
        let with = replace_section(&component, Some(&payload)).unwrap();
        // Replacing again keeps one section; removing gives the component back.
        let again = replace_section(&with, Some(&payload)).unwrap();
        assert_eq!(with, again);
        assert_eq!(replace_section(&with, None).unwrap(), component);
        let skills = decode(&payload, "notes").unwrap();
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0].uri(), "skill://notes/house-report/SKILL.md");
        assert_eq!(&*skills[0].files[1].bytes, &[0u8, 159, 146]);
        assert_eq!(skills[0].files[1].mime_type(), "application/octet-stream");
    }

    #[test]
    fn a_malformed_section_is_refused_saying_what_is_wrong() {
        for (payload, why) in [
            (&b"not json"[..], "not what cordon build writes"),
            (br#"{"format":"other/2","files":[]}"#, "format"),
            (
                br#"{"format":"cordon-skills/1","files":[{"path":"x","base64":""}]}"#,
                "outside any skill",
            ),
            (
                br#"{"format":"cordon-skills/1","files":[{"path":"a/SKILL.md","base64":"!!"}]}"#,
                "not base64",
            ),
            (
                br#"{"format":"cordon-skills/1","files":[{"path":"a/x.md","base64":""}]}"#,
                "no SKILL.md",
            ),
        ] {
            let err = decode(payload, "p").unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }
}
