//! Agent Skills: a folder with a `SKILL.md` (front matter, then instructions) and files it refers
//! to, served read-only under `skill://` with the sha256 and size of every file, as the MCP skills
//! extension asks. Skills come from two places: a plugin carries them in its component (a custom
//! section `cordon build` writes from the project's `skills/` folder, `embedded.rs`), served under
//! `skill://PLUGIN/NAME/`; and the operator's own folders (`[skills] dirs`, `folder.rs`), served
//! under `skill://NAME/`. Their files are read once, when the plugins load, and held in memory, so
//! what is served is what was checked and digested.

mod bounded_yaml;
pub mod embedded;
pub mod folder;
pub mod front_matter;
pub(crate) mod section_scan;

use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::Arc;

/// The URI scheme skills are served under.
pub const SKILL_URI_PREFIX: &str = "skill://";
/// The file every skill has.
pub const SKILL_MD: &str = "SKILL.md";
/// The most files one skill may have (the extension's bound).
pub const MAX_FILES_PER_SKILL: usize = 512;
/// The most bytes one skill's files may add up to (the extension's bound).
pub const MAX_BYTES_PER_SKILL: u64 = 16 << 20;
/// The most skills one source (a plugin, or all the operator's folders) may have.
pub const MAX_SKILLS_PER_SOURCE: usize = 256;

/// Where a skill comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillOrigin {
    /// Carried in this plugin's component.
    Plugin(Arc<str>),
    /// The operator's folder (`[skills] dirs`).
    Folder(PathBuf),
}

impl std::fmt::Display for SkillOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Plugin(id) => write!(f, "plugin {id}"),
            Self::Folder(dir) => write!(f, "skills folder {}", dir.display()),
        }
    }
}

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its path inside the skill's folder, `/`-separated (`SKILL.md`, `templates/report.md`).
    pub path: String,
    /// Its bytes, as served.
    pub bytes: Arc<[u8]>,
    /// `sha256:` and the hex digest of the bytes.
    pub digest: String,
}

impl SkillFile {
    /// The file `path` with `bytes`, digested.
    pub fn new(path: String, bytes: Vec<u8>) -> Self {
        let digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
        Self {
            path,
            bytes: bytes.into(),
            digest,
        }
    }

    /// Its MIME type, by its extension (`text/markdown` for `.md`); text of another kind is
    /// `text/plain`, anything else `application/octet-stream`.
    pub fn mime_type(&self) -> &'static str {
        let extension = self
            .path
            .rsplit_once('.')
            .map(|(_, ext)| ext.to_ascii_lowercase());
        let known = match extension.as_deref() {
            Some("md" | "markdown") => Some("text/markdown"),
            Some("txt") => Some("text/plain"),
            Some("json") => Some("application/json"),
            Some("yaml" | "yml") => Some("application/yaml"),
            Some("toml") => Some("application/toml"),
            Some("csv") => Some("text/csv"),
            Some("html" | "htm") => Some("text/html"),
            Some("py") => Some("text/x-python"),
            Some("js" | "mjs") => Some("text/javascript"),
            Some("sh") => Some("application/x-sh"),
            Some("png") => Some("image/png"),
            Some("jpg" | "jpeg") => Some("image/jpeg"),
            Some("gif") => Some("image/gif"),
            Some("svg") => Some("image/svg+xml"),
            Some("pdf") => Some("application/pdf"),
            _ => None,
        };
        known.unwrap_or(if std::str::from_utf8(&self.bytes).is_ok() {
            "text/plain"
        } else {
            "application/octet-stream"
        })
    }

    /// Whether it is served as text (valid UTF-8 of a text type), not as a blob.
    pub fn is_text(&self) -> bool {
        let mime = self.mime_type();
        (mime.starts_with("text/")
            || matches!(
                mime,
                "application/json"
                    | "application/yaml"
                    | "application/toml"
                    | "application/x-sh"
                    | "image/svg+xml"
            ))
            && std::str::from_utf8(&self.bytes).is_ok()
    }
}

/// A skill: its front matter and its files, `SKILL.md` first.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// What its `SKILL.md` says about it.
    pub front_matter: front_matter::FrontMatter,
    /// Where it comes from.
    pub origin: SkillOrigin,
    /// Its root URI, without a trailing `/` (`skill://PLUGIN/NAME` or `skill://NAME`).
    pub root: String,
    /// Its files, `SKILL.md` first, the others by path.
    pub files: Vec<SkillFile>,
}

impl Skill {
    /// The skill `name` made of `files` (paths inside its folder): its `SKILL.md` read and
    /// checked, the bounds on files and bytes checked, every path checked.
    pub fn from_files(
        name: &str,
        mut files: Vec<SkillFile>,
        origin: SkillOrigin,
    ) -> Result<Self, String> {
        front_matter::check_name(name)?;
        if files.len() > MAX_FILES_PER_SKILL {
            return Err(format!(
                "it has {} files, more than the {MAX_FILES_PER_SKILL} a skill may have",
                files.len()
            ));
        }
        let bytes: u64 = files.iter().map(|file| file.bytes.len() as u64).sum();
        if bytes > MAX_BYTES_PER_SKILL {
            return Err(format!(
                "its files add up to {bytes} bytes, more than the {MAX_BYTES_PER_SKILL} a skill may have"
            ));
        }
        for file in &files {
            check_path(&file.path)?;
        }
        files.sort_by(|a, b| (a.path != SKILL_MD, &a.path).cmp(&(b.path != SKILL_MD, &b.path)));
        if files.windows(2).any(|pair| pair[0].path == pair[1].path) {
            return Err("it lists a file twice".into());
        }
        let Some(skill_md) = files.first().filter(|file| file.path == SKILL_MD) else {
            return Err(format!("it has no {SKILL_MD}"));
        };
        let text = std::str::from_utf8(&skill_md.bytes)
            .map_err(|_| format!("its {SKILL_MD} is not UTF-8 text"))?;
        let front_matter = front_matter::parse(text, name)
            .map_err(|reason| format!("its {SKILL_MD}: {reason}"))?;
        let root = match &origin {
            SkillOrigin::Plugin(plugin) => format!("{SKILL_URI_PREFIX}{plugin}/{name}"),
            SkillOrigin::Folder(_) => format!("{SKILL_URI_PREFIX}{name}"),
        };
        Ok(Self {
            front_matter,
            origin,
            root,
            files,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.front_matter.name
    }

    /// The name the agent knows it by: `NAME` for the operator's, `PLUGIN/NAME` for a plugin's (so
    /// a plugin's skill never reads as one of the operator's).
    pub fn qualified_name(&self) -> String {
        match &self.origin {
            SkillOrigin::Plugin(plugin) => format!("{plugin}/{}", self.name()),
            SkillOrigin::Folder(_) => self.name().to_string(),
        }
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> String {
        self.file_uri(SKILL_MD)
    }

    /// The URI of its file at `path`.
    pub fn file_uri(&self, path: &str) -> String {
        format!("{}/{path}", self.root)
    }

    /// Its file whose URI is `uri`.
    pub fn file_at(&self, uri: &str) -> Option<&SkillFile> {
        let path = uri.strip_prefix(&self.root)?.strip_prefix('/')?;
        self.files.iter().find(|file| file.path == path)
    }

    /// Its `SKILL.md` as text (checked at load to be UTF-8).
    pub fn instructions(&self) -> &str {
        std::str::from_utf8(&self.files[0].bytes).unwrap_or_default()
    }
}

/// A path inside a skill: `/`-separated segments of letters, digits, `.`, `_` and `-`, none empty,
/// none starting with `.`, at most 8 deep and 256 bytes long, so it stands in a URI as written and
/// names nothing outside the skill.
pub fn check_path(path: &str) -> Result<(), String> {
    let fits = !path.is_empty()
        && path.len() <= 256
        && path.split('/').count() <= 8
        && path.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        });
    if fits {
        Ok(())
    } else {
        Err(format!(
            "file {:?} has a path cordon does not serve: use letters, digits, `.`, `_` and `-` in at most 8 `/`-separated parts, none starting with `.`",
            crate::report::text_cut::cut_chars(
                path,
                120,
                crate::report::text_cut::CutMark::Ellipsis
            )
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> SkillFile {
        SkillFile::new(path.into(), text.as_bytes().to_vec())
    }

    const SKILL: &str =
        "---\nname: house-report\ndescription: The house report format.\n---\nWrite it so.\n";

    #[test]
    fn a_skill_has_its_skill_md_first_and_uris_under_its_root() {
        let skill = Skill::from_files(
            "house-report",
            vec![file("templates/a.md", "x"), file("SKILL.md", SKILL)],
            SkillOrigin::Plugin("notes".into()),
        )
        .unwrap();
        assert_eq!(skill.uri(), "skill://notes/house-report/SKILL.md");
        assert_eq!(skill.files[0].path, "SKILL.md");
        assert_eq!(
            skill
                .file_at("skill://notes/house-report/templates/a.md")
                .unwrap()
                .mime_type(),
            "text/markdown"
        );
        assert!(skill.file_at("skill://notes/house-report/../x").is_none());
        assert!(skill.files[0].digest.starts_with("sha256:") && skill.files[0].digest.len() == 71);
        let local = Skill::from_files(
            "house-report",
            vec![file("SKILL.md", SKILL)],
            SkillOrigin::Folder("/s".into()),
        )
        .unwrap();
        assert_eq!(local.uri(), "skill://house-report/SKILL.md");
    }

    #[test]
    fn a_skill_breaking_a_rule_is_refused_saying_which() {
        let origin = || SkillOrigin::Folder("/s".into());
        for (files, why) in [
            (vec![file("a.md", "x")], "no SKILL.md"),
            (
                vec![file("SKILL.md", SKILL), file("../x", "y")],
                "path cordon does not serve",
            ),
            (
                vec![file("SKILL.md", SKILL), file(".env", "y")],
                "path cordon does not serve",
            ),
            (
                vec![file("SKILL.md", SKILL), file("a b", "y")],
                "path cordon does not serve",
            ),
            (
                vec![file("SKILL.md", SKILL), file("SKILL.md", SKILL)],
                "twice",
            ),
        ] {
            let err = Skill::from_files("house-report", files, origin()).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let many = (0..=MAX_FILES_PER_SKILL)
            .map(|i| file(&format!("f{i}"), ""))
            .collect();
        assert!(
            Skill::from_files("house-report", many, origin())
                .unwrap_err()
                .contains("files")
        );
        let big = vec![SkillFile::new(
            "SKILL.md".into(),
            vec![b'a'; MAX_BYTES_PER_SKILL as usize + 1],
        )];
        assert!(
            Skill::from_files("house-report", big, origin())
                .unwrap_err()
                .contains("bytes")
        );
    }
}
