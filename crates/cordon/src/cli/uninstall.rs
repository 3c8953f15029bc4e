//! `cordon remove NAME`: the inverse of `cordon add`. Deletes `plugins/NAME.wasm`, the
//! `[plugins.NAME]` table of cordon.toml (listing the grants it held, so none goes unseen) and
//! NAME's source in cordon.lock. Its approval stays in the lock: removing a plugin changes the
//! approved set, so `cordon --locked` refuses to start until `cordon lock` approves the set without
//! it (a removed guard hook must not quietly mean an unguarded host). A name left in `[hooks]
//! order` is reported, not edited. The plugin file goes first, so a failure leaves the config and
//! lock as they were.

use crate::cli::install::{
    InstallPaths, config_document, grant_keys, install_file, is_plugin_name, load_lock,
};
use anyhow::{Context as _, bail};
use std::path::Path;
use std::process::ExitCode;

/// `cordon remove NAME`.
pub fn remove(paths: &InstallPaths, name: &str) -> anyhow::Result<ExitCode> {
    if !is_plugin_name(name) {
        bail!(
            "{name:?} is not a plugin name (lowercase letters, digits and _, starting with a letter)"
        );
    }
    let target = paths.plugins.join(format!("{name}.wasm"));
    let file_there = match target.symlink_metadata() {
        Ok(meta) if meta.is_dir() => bail!(
            "{} is a directory, not a plugin; nothing was removed",
            target.display()
        ),
        Ok(_) => true,
        Err(_) => false,
    };
    let config = config_without(&paths.config, name)?;
    let mut lock = load_lock(&paths.lock)?;
    let had_source = lock.sources.remove(name).is_some();
    let approved = lock.plugins.contains_key(name);
    if !file_there && config.text.is_none() && !had_source {
        bail!(
            "there is no plugin {name}: no {}, no [plugins.{name}] in {}, no source for it in {}{}",
            target.display(),
            paths.config.display(),
            paths.lock.display(),
            match approved {
                true =>
                    " (the lock still approves one: run `cordon lock` to approve the set without it)",
                false => "",
            }
        );
    }

    if file_there {
        std::fs::remove_file(&target)
            .with_context(|| format!("removing {}; nothing else was changed", target.display()))?;
    }
    if let Some(text) = &config.text {
        install_file(&paths.config, text.as_bytes())?;
    }
    if had_source {
        lock.write(&paths.lock)?;
    }

    let out = |line: &str| crate::cli::render::stdout_line(line);
    out(&format!("removed {name}"))?;
    if file_there {
        out(&format!("  deleted {}", target.display()))?;
    }
    if config.text.is_some() {
        out(&format!(
            "  dropped [plugins.{name}] from {}{}",
            paths.config.display(),
            match config.grants.is_empty() {
                true => String::new(),
                false => format!(", with its grants: {}", config.grants.join(", ")),
            }
        ))?;
    }
    if had_source {
        out(&format!(
            "  dropped its source from {}",
            paths.lock.display()
        ))?;
    }
    if config.in_hook_order {
        out(&format!(
            "  still named in [hooks] order in {}: take it out there too",
            paths.config.display()
        ))?;
    }
    if approved {
        out(&format!(
            "  {} still approves it: `cordon --locked` will not start until `cordon lock` approves the set without it",
            paths.lock.display()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The config with `[plugins.NAME]` taken out.
struct ConfigEdit {
    /// The new text; `None` when the config has no such table (or no file).
    text: Option<String>,
    /// The keys the table held besides `sha256`.
    grants: Vec<String>,
    /// Whether `[hooks] order` names the plugin.
    in_hook_order: bool,
}

fn config_without(config: &Path, name: &str) -> anyhow::Result<ConfigEdit> {
    let mut document = config_document(config)?;
    let in_hook_order = document
        .get("hooks")
        .and_then(|hooks| hooks.get("order"))
        .and_then(toml_edit::Item::as_array)
        .is_some_and(|order| order.iter().any(|entry| entry.as_str() == Some(name)));
    let removed = document
        .get_mut("plugins")
        .and_then(toml_edit::Item::as_table_like_mut)
        .and_then(|plugins| plugins.remove(name));
    let Some(removed) = removed else {
        return Ok(ConfigEdit {
            text: None,
            grants: Vec::new(),
            in_hook_order,
        });
    };
    let grants = removed.as_table_like().map(grant_keys).unwrap_or_default();
    Ok(ConfigEdit {
        text: Some(document.to_string()),
        grants,
        in_hook_order,
    })
}
