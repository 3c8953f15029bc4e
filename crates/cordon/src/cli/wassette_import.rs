//! `cordon add` of a component that comes with a Wassette permission policy (`--policy FILE`, or a
//! `NAME.policy.yaml` / `policy.yaml` beside a local file): the grants that allow what the policy
//! allows and no more are shown, with what cordon left out and why, and written into
//! `[plugins.NAME]` only when approved (`--yes`, or the person at the terminal says yes).

use cordon_distribution::Source;
use cordon_distribution::wassette_policy::{ProposedGrants, read_policy};
use std::path::{Path, PathBuf};

/// The policy to read for `source`: the one given, or the one beside a local file. Two beside it
/// (`NAME.policy.yaml` and `policy.yaml`) are an error: reading one would drop the other's denies.
pub fn policy_path(source: &Source, given: Option<&Path>) -> anyhow::Result<Option<PathBuf>> {
    if let Some(given) = given {
        return Ok(Some(given.to_path_buf()));
    }
    let Source::File { path } = source else {
        return Ok(None);
    };
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return Ok(None);
    };
    let stem = stem.to_string_lossy();
    let found: Vec<PathBuf> = [format!("{stem}.policy.yaml"), "policy.yaml".to_string()]
        .into_iter()
        .map(|name| dir.join(name))
        .filter(|candidate| candidate.symlink_metadata().is_ok())
        .collect();
    if let [first, second] = found.as_slice() {
        anyhow::bail!(
            "two Wassette policies are beside the component, {} and {}; name the one to read with --policy",
            first.display(),
            second.display()
        );
    }
    Ok(found.into_iter().next())
}

/// The grants the policy at `path` proposes.
pub fn proposal(path: &Path) -> anyhow::Result<ProposedGrants> {
    Ok(read_policy(path)?)
}

/// What granting `host` would expose beyond what a plugin is for: the whole host, the operator's
/// home (or a directory holding it), or a directory holding the project itself (its cordon.toml,
/// plugins and lock). Such a grant is never applied without `--allow-broad-grants`.
pub fn broad_exposure(host: &Path, config_dir: &Path) -> Option<String> {
    let host = host.canonicalize().unwrap_or_else(|_| host.to_path_buf());
    if host.parent().is_none() {
        return Some("the whole host".to_string());
    }
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .map(|home| home.canonicalize().unwrap_or(home));
    if let Some(home) = home.filter(|home| home.starts_with(&host)) {
        return Some(if home == host {
            "your home directory".to_string()
        } else {
            format!(
                "a directory holding your home directory ({})",
                home.display()
            )
        });
    }
    config_dir.starts_with(&host).then(|| {
        format!(
            "a directory holding this project ({}): its cordon.toml, plugins and lock",
            config_dir.display()
        )
    })
}

/// Takes the directories that expose too much ([`broad_exposure`]) out of `proposed`, each said
/// in its `left_out`, unless `allowed`; returns what each broad directory kept exposes.
pub fn hold_back_broad(
    proposed: &mut ProposedGrants,
    config_dir: &Path,
    allowed: bool,
) -> Vec<String> {
    let mut kept_broad = Vec::new();
    let mut held_back = Vec::new();
    proposed.dirs.retain(|dir| {
        let Some(exposes) = broad_exposure(&dir.host, config_dir) else {
            return true;
        };
        let what = format!("{} at {}", dir.host.display(), dir.guest);
        if allowed {
            kept_broad.push(format!("{what} exposes {exposes} (--allow-broad-grants)"));
            true
        } else {
            held_back.push(format!(
                "storage {what}: it exposes {exposes}; --yes alone never grants that (add --allow-broad-grants if you mean it, or grant a narrower directory in cordon.toml yourself)"
            ));
            false
        }
    });
    proposed.left_out.extend(held_back);
    kept_broad
}

/// The proposal as lines for the terminal: each grant as cordon.toml writes it, then what was
/// left out.
pub fn describe(proposed: &ProposedGrants) -> Vec<String> {
    let mut lines = Vec::new();
    for dir in &proposed.dirs {
        lines.push(format!(
            "dirs: {} at {} ({})",
            dir.host.display(),
            dir.guest,
            if dir.read_write { "rw" } else { "ro" }
        ));
    }
    for origin in &proposed.origins {
        lines.push(format!("http: {origin}"));
    }
    for name in &proposed.env {
        lines.push(format!("env: {name}"));
    }
    if let Some(memory) = &proposed.memory {
        lines.push(format!("limits.memory: {memory}"));
    }
    for left_out in &proposed.left_out {
        lines.push(format!("left out: {left_out}"));
    }
    lines
}

/// Writes the proposed grants into `[plugins.NAME]` of `document` (host paths under the config's
/// directory relative to it, as the operator would write them).
pub fn apply(
    document: &mut toml_edit::DocumentMut,
    name: &str,
    proposed: &ProposedGrants,
    config_dir: &Path,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let entry = document
        .entry("plugins")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .context("`plugins` in the config is not a table")?
        .entry(name)
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .with_context(|| format!("[plugins.{name}] in the config is not a table"))?;
    if !proposed.dirs.is_empty() {
        let mut dirs = toml_edit::Array::new();
        for dir in &proposed.dirs {
            let host = dir
                .host
                .strip_prefix(config_dir)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| dir.host.clone());
            let host = if host.as_os_str().is_empty() {
                ".".to_string()
            } else {
                host.to_string_lossy().into_owned()
            };
            let mut table = toml_edit::InlineTable::new();
            table.insert("host", host.into());
            table.insert("guest", dir.guest.clone().into());
            table.insert("mode", if dir.read_write { "rw" } else { "ro" }.into());
            dirs.push(table);
        }
        entry.insert("dirs", toml_edit::value(dirs));
    }
    if !proposed.origins.is_empty() {
        let mut http = toml_edit::Array::new();
        for origin in &proposed.origins {
            let mut table = toml_edit::InlineTable::new();
            table.insert("origin", origin.clone().into());
            http.push(table);
        }
        entry.insert("http", toml_edit::value(http));
    }
    if !proposed.env.is_empty() {
        let env: toml_edit::Array = proposed.env.iter().map(String::as_str).collect();
        entry.insert("env", toml_edit::value(env));
    }
    if let Some(memory) = &proposed.memory {
        let mut limits = toml_edit::InlineTable::new();
        limits.insert("memory", memory.clone().into());
        entry.insert("limits", toml_edit::value(limits));
    }
    Ok(())
}
