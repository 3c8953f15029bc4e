//! The operator's own skills (`[skills] dirs`): each directory named there is a skill when it has a
//! `SKILL.md`, and otherwise holds skills, one per subdirectory with a `SKILL.md`, as a team's
//! existing skill folders are laid out. Files are read whole when the plugins load. Hidden files
//! and directories (`.git`) are left out; a symbolic link is followed only when it stays inside the
//! skill's folder, so a skill cannot serve a file from elsewhere on the host. A skill that breaks
//! a rule is left out with the reason, and the others are served.

use super::{MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SKILL_MD, Skill, SkillFile, SkillOrigin};
use std::path::{Path, PathBuf};

/// The skills in the operator's folders, and one sentence for each one left out.
#[derive(Debug, Default, Clone)]
pub struct FolderSkills {
    /// The skills, by folder, then by name.
    pub skills: Vec<Skill>,
    /// Why a skill or a folder was left out, one sentence each.
    pub left_out: Vec<String>,
    /// Where the served skills are on disk: each skill's folder and every file, resolved (checked
    /// against the read-write grants: no plugin may be able to rewrite them).
    pub on_disk: Vec<PathBuf>,
}

/// Reads the skills in `dirs`.
pub fn read_all(dirs: &[PathBuf]) -> FolderSkills {
    let mut found = FolderSkills::default();
    for dir in dirs {
        let candidates = if dir.join(SKILL_MD).is_file() {
            vec![dir.clone()]
        } else {
            match std::fs::read_dir(dir) {
                Ok(entries) => {
                    let mut dirs: Vec<PathBuf> = entries
                        .flatten()
                        .map(|entry| entry.path())
                        .filter(|path| path.join(SKILL_MD).is_file())
                        .collect();
                    dirs.sort();
                    dirs
                }
                Err(err) => {
                    found.left_out.push(format!(
                        "skills folder {} cannot be read ({err}); its skills are not served",
                        dir.display()
                    ));
                    continue;
                }
            }
        };
        for skill_dir in candidates {
            let name = skill_dir
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            if found.skills.len() >= super::MAX_SKILLS_PER_SOURCE {
                found.left_out.push(format!(
                    "skill {} is left out: the skills folders hold more than {} skills",
                    skill_dir.display(),
                    super::MAX_SKILLS_PER_SOURCE
                ));
                continue;
            }
            let mut paths = Vec::new();
            let read = read_files(&skill_dir, &mut paths).and_then(|files| {
                Skill::from_files(&name, files, SkillOrigin::Folder(dir.clone()))
            });
            match read {
                Ok(skill) if found.skills.iter().any(|other| other.root == skill.root) => {
                    found.left_out.push(format!(
                        "skill {} is left out: another folder has a skill named {name:?}",
                        skill_dir.display()
                    ));
                }
                Ok(skill) => {
                    found.skills.push(skill);
                    found.on_disk.extend(paths);
                }
                Err(reason) => found.left_out.push(format!(
                    "skill {} is left out: {reason}",
                    skill_dir.display()
                )),
            }
        }
    }
    for reason in &found.left_out {
        tracing::warn!("{reason}");
    }
    found
}

/// Every file under `root` (hidden ones left out), with its path inside it; `paths` gets the
/// folder and each file, resolved.
fn read_files(root: &Path, paths: &mut Vec<PathBuf>) -> Result<Vec<SkillFile>, String> {
    let canonical_root = root
        .canonicalize()
        .map_err(|err| format!("its folder cannot be read ({err})"))?;
    paths.push(canonical_root.clone());
    let mut files = Vec::new();
    let mut total: u64 = 0;
    let mut pending = vec![(canonical_root.clone(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|err| format!("{} cannot be read ({err})", dir.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = format!("{prefix}{name}");
            // Followed, then required to stay inside the skill's folder.
            let target = entry
                .path()
                .canonicalize()
                .map_err(|err| format!("{path} cannot be read ({err})"))?;
            let inside = target.strip_prefix(&canonical_root).map_err(|_| {
                format!(
                    "{path} is a link to {}, outside the skill's folder",
                    target.display()
                )
            })?;
            if inside
                .components()
                .any(|part| part.as_os_str().to_string_lossy().starts_with('.'))
            {
                return Err(format!(
                    "{path} is a link to a hidden file or folder ({}), which is not served",
                    inside.display()
                ));
            }
            let metadata = std::fs::metadata(&target)
                .map_err(|err| format!("{path} cannot be read ({err})"))?;
            if metadata.is_dir() {
                if path.split('/').count() >= 8 {
                    return Err(format!("{path} is nested more than 8 deep"));
                }
                pending.push((target, format!("{path}/")));
                continue;
            }
            if !metadata.is_file() {
                return Err(format!("{path} is not a regular file"));
            }
            total += metadata.len();
            if total > MAX_BYTES_PER_SKILL || files.len() >= MAX_FILES_PER_SKILL {
                return Err(format!(
                    "its files are more than a skill may have ({MAX_FILES_PER_SKILL} files, {MAX_BYTES_PER_SKILL} bytes)"
                ));
            }
            let bytes = read_regular(&target, MAX_BYTES_PER_SKILL)
                .map_err(|err| format!("{path} cannot be read ({err})"))?;
            paths.push(target);
            files.push(SkillFile::new(path, bytes));
        }
    }
    Ok(files)
}

/// The bytes of the regular file at `path` (no more than `limit`): opened without following a
/// final link and without blocking (a FIFO put in its place cannot hang the load), checked to be a
/// regular file on the descriptor.
fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn skill_md(name: &str) -> String {
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody.\n")
    }

    #[test]
    fn a_folder_of_skills_and_a_skill_folder_are_both_read() {
        let temp = tempfile::tempdir().unwrap();
        let team = temp.path().join("team");
        write(&team, "alpha/SKILL.md", &skill_md("alpha"));
        write(&team, "alpha/refs/guide.md", "guide");
        write(&team, "alpha/.git/config", "hidden");
        write(&team, "beta/SKILL.md", &skill_md("wrong-name"));
        write(&team, "notes.txt", "not a skill");
        let single = temp.path().join("gamma");
        write(&single, "SKILL.md", &skill_md("gamma"));
        let found = read_all(&[team.clone(), single, temp.path().join("missing")]);
        let names: Vec<&str> = found.skills.iter().map(Skill::name).collect();
        assert_eq!(names, ["alpha", "gamma"]);
        let paths: Vec<&str> = found.skills[0]
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(paths, ["SKILL.md", "refs/guide.md"]);
        assert_eq!(found.left_out.len(), 2, "{:?}", found.left_out);
        assert!(found.left_out[0].contains("beta") && found.left_out[0].contains("directory"));
        assert!(found.left_out[1].contains("missing"));
    }

    #[test]
    fn a_link_out_of_the_skill_folder_leaves_the_skill_out() {
        let temp = tempfile::tempdir().unwrap();
        let team = temp.path().join("team");
        write(&team, "alpha/SKILL.md", &skill_md("alpha"));
        write(temp.path(), "secret.txt", "secret");
        std::os::unix::fs::symlink(temp.path().join("secret.txt"), team.join("alpha/leak.txt"))
            .unwrap();
        let found = read_all(&[team]);
        assert!(found.skills.is_empty());
        assert!(found.left_out[0].contains("outside the skill's folder"));
    }
}
