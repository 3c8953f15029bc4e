//! `cordon remove NAME`: the inverse of `cordon add`. Deletes `plugins/NAME.wasm`, the
//! `[plugins.NAME]` table of cordon.toml (listing the grants it held, so none goes unseen) and
//! NAME's source and approval in cordon.lock. A name left in `[hooks] order` is reported, not
//! edited (the order is part of what `cordon lock` approves). Every edit is worked out before
//! anything is written.

use crate::cli::install::{InstallPaths, config_document, install_file, is_plugin_name, load_lock};
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
    let file_there = target.symlink_metadata().is_ok();
    let config = config_without(&paths.config, name)?;
    let mut lock = load_lock(&paths.lock)?;
    let had_source = lock.sources.remove(name).is_some();
    let had_approval = lock.plugins.remove(name).is_some();
    if !file_there && config.text.is_none() && !had_source && !had_approval {
        bail!(
            "there is no plugin {name}: no {}, no [plugins.{name}] in {}, nothing for it in {}",
            target.display(),
            paths.config.display(),
            paths.lock.display()
        );
    }

    if let Some(text) = &config.text {
        install_file(&paths.config, text.as_bytes())?;
    }
    if had_source || had_approval {
        lock.write(&paths.lock)?;
    }
    if file_there {
        std::fs::remove_file(&target).with_context(|| format!("removing {}", target.display()))?;
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
    match (had_source, had_approval) {
        (true, true) => out(&format!(
            "  dropped its source and approval from {}",
            paths.lock.display()
        ))?,
        (true, false) => out(&format!(
            "  dropped its source from {}",
            paths.lock.display()
        ))?,
        (false, true) => out(&format!(
            "  dropped its approval from {}",
            paths.lock.display()
        ))?,
        (false, false) => {}
    }
    if config.in_hook_order {
        out(&format!(
            "  still named in [hooks] order in {}: take it out there too, then run `cordon lock`",
            paths.config.display()
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
    let grants = removed
        .as_table_like()
        .map(|table| {
            table
                .iter()
                .map(|(key, _)| key.to_string())
                .filter(|key| key != "sha256")
                .collect()
        })
        .unwrap_or_default();
    Ok(ConfigEdit {
        text: Some(document.to_string()),
        grants,
        in_hook_order,
    })
}
