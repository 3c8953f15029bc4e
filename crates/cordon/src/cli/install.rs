//! `cordon add`, `cordon sync` and `cordon push`: installing plugins from OCI registries, URLs
//! pinned by sha256 or local files, and publishing them. `add` fetches and verifies the
//! component, loads it with nothing granted to show what it offers and what it could use,
//! writes `plugins/NAME.wasm`, pins it by sha256 under `[plugins.NAME]` in cordon.toml (no
//! grants), and records its source and digest in cordon.lock; `sync` (or `add --locked`)
//! installs exactly the recorded set again. Nothing is written unless every digest matches.
//! (`cordon remove` undoes an `add`: uninstall.rs.)

use anyhow::{Context as _, bail};
use cordon_distribution::signature::{Signer, SigningKey};
use cordon_distribution::{ComponentSummary, Source, fetch};
use cordon_runtime::capabilities::lock::{Lockfile, PluginSource};
use cordon_runtime::{CompileCache, RuntimeBuilder};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where `add`, `sync` and `push` read and write.
pub struct InstallPaths {
    pub plugins: PathBuf,
    pub config: PathBuf,
    pub lock: PathBuf,
    pub cache: CompileCache,
}

/// What `cordon add` was asked besides the reference.
pub struct AddOptions<'a> {
    pub name: Option<&'a str>,
    pub sha256: Option<&'a str>,
    pub force: bool,
    /// A Wassette policy to propose grants from (else one beside a local file, if any).
    pub policy: Option<&'a Path>,
    /// `--yes`: apply a policy's grants without asking.
    pub yes: bool,
    /// `--allow-broad-grants`: a policy may grant `/`, the home directory or a directory holding
    /// the project.
    pub allow_broad_grants: bool,
}

/// `cordon add REF`.
pub async fn add(
    paths: &InstallPaths,
    reference: &str,
    options: &AddOptions<'_>,
) -> anyhow::Result<ExitCode> {
    let AddOptions {
        name,
        sha256,
        force,
        ..
    } = *options;
    let source = Source::parse(reference)?;
    super::config_file::loads_before_editing(&paths.config, "cordon add")?;
    let policy = match crate::cli::wassette_import::policy_path(&source, options.policy)? {
        Some(path) => Some((crate::cli::wassette_import::proposal(&path)?, path)),
        None => None,
    };
    let name = match name {
        Some(name) => name.to_string(),
        None => source.default_name(),
    };
    check_name(&name)?;
    let fetched = fetch(&source, sha256, &super::host_secrets::registry_secret).await?;
    // Who signed it, before anything else is looked at; a signer other than the one the lock
    // recorded for the name is a new decision (--force).
    let trust = super::trust_policy::read(&paths.config)?;
    let recorded_signer = match force {
        true => None,
        false => load_lock(&paths.lock)?
            .sources
            .get(&name)
            .and_then(|recorded| recorded.signer.clone()),
    };
    let signed =
        super::signatures::look(&trust, &fetched.pinned, recorded_signer.as_deref()).await?;
    super::signatures::check(
        &trust,
        &name,
        &fetched.pinned.to_text(),
        &signed,
        recorded_signer.as_deref(),
    )?;
    let target = paths.plugins.join(format!("{name}.wasm"));
    if let Ok(existing) = cordon_distribution::read_component_file(&target)
        && cordon_distribution::sha256_hex(&existing) != fetched.sha256
        && !force
    {
        bail!(
            "{} already holds another plugin (sha256 {}); pass --force to replace it, or --name to install this one beside it",
            target.display(),
            cordon_distribution::sha256_hex(&existing)
        );
    }
    let kept = grants_under_the_name(&paths.config, &name, &fetched.sha256, force)?;
    let plugin = inspect(paths, &name, &fetched.bytes).await?;
    // Everything that can fail is checked before anything is written.
    let mut document = pinned_config(&paths.config, &name, &fetched.sha256)?;
    let out = |line: &str| crate::cli::render::stdout_line(line);
    let mut from_policy = None;
    let config_dir = paths
        .config
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let config_dir = config_dir
        .canonicalize()
        .unwrap_or(config_dir.to_path_buf());
    let mut policy = policy;
    let mut broad_kept = Vec::new();
    if let Some((proposed, _)) = policy.as_mut() {
        broad_kept = crate::cli::wassette_import::hold_back_broad(
            proposed,
            &config_dir,
            options.allow_broad_grants,
        );
    }
    if let Some((proposed, path)) = &policy {
        let shown = for_terminal(&path.display().to_string());
        out(&format!(
            "{shown} (a Wassette policy) proposes for [plugins.{name}]:"
        ))?;
        for line in crate::cli::wassette_import::describe(proposed) {
            out(&format!("  {}", for_terminal(&line)))?;
        }
        for line in &broad_kept {
            out(&format!("  warning: {}", for_terminal(line)))?;
        }
        if proposed.is_empty() {
            out("  nothing cordon can grant as narrowly")?;
        } else if !kept.is_empty() {
            out(&format!(
                "  not applied: [plugins.{name}] already grants {}",
                kept.join(", ")
            ))?;
        } else if options.yes
            || crate::cli::approval_prompt::confirm(&format!("? grant these to {name}? [y/N] "))
        {
            let loaded_before = config_text_loads(&document.to_string(), paths);
            crate::cli::wassette_import::apply(&mut document, &name, proposed, &config_dir)?;
            if let (Ok(()), Err(refused)) = (
                loaded_before,
                config_text_loads(&document.to_string(), paths),
            ) {
                bail!(
                    "the grants {shown} proposes would leave {} unloadable ({refused}); nothing was written. Grant what it needs under [plugins.{name}] by hand",
                    paths.config.display()
                );
            }
            from_policy = Some(shown);
        } else {
            out(&format!(
                "  not applied (run again with --yes, or grant them under [plugins.{name}] yourself)"
            ))?;
        }
    }
    let config_text = document.to_string();
    install_file(&target, &fetched.bytes)?;
    install_file(&paths.config, config_text.as_bytes())?;
    let mut lock = load_lock(&paths.lock)?;
    lock.sources.insert(
        name.clone(),
        PluginSource {
            source: fetched.pinned.to_text(),
            sha256: fetched.sha256.clone(),
            signer: signed.signer.as_ref().map(Signer::lock_text),
        },
    );
    lock.write(&paths.lock)?;
    out(&format!(
        "installed {} from {} (sha256 {})",
        target.display(),
        for_terminal(&fetched.pinned.to_text()),
        fetched.sha256
    ))?;
    out(&format!("  {}", for_terminal(&signed.found)))?;
    for line in plugin {
        out(&format!("  {line}"))?;
    }
    if let Some(policy) = from_policy {
        out(&format!(
            "  granted under [plugins.{name}] in {}: what {policy} allows (above). Review them, then run `cordon lock`.",
            paths.config.display()
        ))?;
    } else if kept.is_empty() {
        out(&format!(
            "  granted: nothing. Grant what it needs under [plugins.{name}] in {}, then run `cordon lock`.",
            paths.config.display()
        ))?;
    } else {
        out(&format!(
            "  still granted under [plugins.{name}] in {}: {}. Review them for this component, then run `cordon lock`.",
            paths.config.display(),
            kept.join(", ")
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `cordon sync` (and `cordon add --locked`): installs every plugin cordon.lock records.
pub async fn sync(paths: &InstallPaths) -> anyhow::Result<ExitCode> {
    let lock = Lockfile::load(&paths.lock)?;
    let trust = super::trust_policy::read(&paths.config)?;
    if lock.sources.is_empty() {
        bail!(
            "{} records no plugin sources: install plugins with `cordon add REF` first",
            paths.lock.display()
        );
    }
    std::fs::create_dir_all(&paths.plugins)
        .with_context(|| format!("creating {}", paths.plugins.display()))?;
    for (name, recorded) in &lock.sources {
        check_name(name).with_context(|| {
            format!(
                "{} records a source under a name that is not a plugin name",
                paths.lock.display()
            )
        })?;
        if let Some(approved) = lock.plugins.get(name)
            && approved.sha256 != recorded.sha256
        {
            bail!(
                "{} approves {name} with sha256 {} but records its source with sha256 {}: the lock was edited by hand or is stale; nothing was installed for it (run `cordon add` again, then `cordon lock`)",
                paths.lock.display(),
                approved.sha256,
                recorded.sha256
            );
        }
        // A source the lock does not approve must not pick up grants cordon.toml gives the name.
        let approved = lock
            .plugins
            .get(name)
            .is_some_and(|plugin| plugin.sha256 == recorded.sha256);
        if !approved {
            grants_under_the_name(&paths.config, name, &recorded.sha256, false).with_context(
                || {
                    format!(
                        "{name} is recorded in {} but not approved there",
                        paths.lock.display()
                    )
                },
            )?;
        }
        let target = paths.plugins.join(format!("{name}.wasm"));
        if let Ok(existing) = cordon_distribution::read_component_file(&target)
            && cordon_distribution::sha256_hex(&existing) == recorded.sha256
        {
            crate::cli::render::stdout_line(&format!("{name}: up to date"))?;
            continue;
        }
        let source = Source::parse(&recorded.source)?;
        let fetched = fetch(
            &source,
            Some(&recorded.sha256),
            &super::host_secrets::registry_secret,
        )
        .await
        .with_context(|| format!("installing {name} as cordon.lock records it"))?;
        let signed =
            super::signatures::look(&trust, &fetched.pinned, recorded.signer.as_deref()).await?;
        super::signatures::check(
            &trust,
            name,
            &recorded.source,
            &signed,
            recorded.signer.as_deref(),
        )?;
        install_file(&target, &fetched.bytes)?;
        crate::cli::render::stdout_line(&format!(
            "{name}: installed from {} (sha256 {})",
            for_terminal(&recorded.source),
            for_terminal(&recorded.sha256)
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `cordon push PLUGIN REF`: PLUGIN is a plugin id in the plugins directory or a .wasm path.
/// With `sign`, the pushed manifest is signed with that key (cosign's keyed layout).
pub async fn push(
    paths: &InstallPaths,
    plugin: &str,
    reference: &str,
    sign: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let Source::Oci { reference } = Source::parse(reference)? else {
        bail!("cordon push publishes to an OCI registry: give oci://HOST/REPOSITORY:TAG");
    };
    // The key is read before anything is pushed: a push that cannot be signed is not made.
    let signing_key = match sign {
        Some(path) => {
            let pem = cordon_distribution::signature::read_key_file(path)
                .with_context(|| format!("reading the signing key {}", path.display()))?;
            Some(SigningKey::from_pem(&pem, &path.display().to_string())?)
        }
        None => None,
    };
    let file = if plugin.ends_with(".wasm") || plugin.contains('/') {
        PathBuf::from(plugin)
    } else {
        paths.plugins.join(format!("{plugin}.wasm"))
    };
    let bytes = cordon_distribution::read_component_file(&file)
        .with_context(|| format!("reading the plugin {}", file.display()))?;
    let name = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let summary = summarise(paths, &name, &bytes).await?;
    let pushed = cordon_distribution::push(
        &reference,
        bytes,
        &summary,
        &super::host_secrets::registry_secret,
    )
    .await?;
    let repository = reference.split('@').next().unwrap_or(&reference);
    let repository = match repository.rsplit_once(':') {
        Some((before, tag)) if !tag.contains('/') => before,
        _ => repository,
    };
    crate::cli::render::stdout_line(&format!(
        "pushed {} to oci://{reference} (component sha256 {}); install it pinned with: cordon add oci://{repository}@{}",
        file.display(),
        pushed.component_sha256,
        pushed.manifest_digest
    ))?;
    if let Some(key) = signing_key {
        cordon_distribution::signature::oci_signatures::push(
            repository,
            &pushed.manifest_digest,
            &key,
            &super::host_secrets::registry_secret,
        )
        .await?;
        crate::cli::render::stdout_line(&format!(
            "signed oci://{repository}@{} with the key {} (cosign's layout: oci://{repository}:{})",
            pushed.manifest_digest,
            key.public_key().fingerprint(),
            cordon_distribution::signature::signature_tag(&pushed.manifest_digest)
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Lowercase letters, digits and `_`, starting with a letter: a name that is its own file name.
pub(crate) fn is_plugin_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn check_name(name: &str) -> anyhow::Result<()> {
    if !is_plugin_name(name) {
        bail!(
            "{name:?} is not a plugin name (lowercase letters, digits and _, starting with a letter); choose one with --name"
        );
    }
    Ok(())
}

/// Loads the component alone, with nothing granted: what it offers and what it could use.
async fn inspect(paths: &InstallPaths, name: &str, bytes: &[u8]) -> anyhow::Result<Vec<String>> {
    let plugin = load_alone(paths, name, bytes).await?;
    let mut lines = vec![format!("contract {}", plugin.contract)];
    if !plugin.tools.is_empty() {
        let tools: Vec<&str> = plugin.tools.iter().map(|tool| tool.name.as_str()).collect();
        lines.push(format!("tools: {}", tools.join(", ")));
    }
    if let Some(hook) = &plugin.hook {
        let when = match (hook.before, hook.after) {
            (true, true) => Some("before and after"),
            (true, false) => Some("before"),
            (false, true) => Some("after"),
            (false, false) => None,
        };
        let over = if hook.tools.is_empty() {
            "every tool".to_string()
        } else {
            hook.tools.join(", ")
        };
        let mut watches: Vec<String> = when
            .map(|when| format!("{when} calls of {over}"))
            .into_iter()
            .collect();
        if !hook.stages.is_empty() {
            let stages: Vec<&str> = hook.stages.iter().map(|stage| stage.as_str()).collect();
            watches.push(format!("the session at {}", stages.join(", ")));
        }
        lines.push(format!(
            "hook: {} (runs only when granted `hook = true`)",
            watches.join("; ")
        ));
    }
    let needs = capabilities_it_could_use(&plugin.imports);
    lines.push(if needs.is_empty() {
        "could use: nothing beyond computing (it imports no files, network or environment)".into()
    } else {
        format!("could use, if granted: {}", needs.join("; "))
    });
    Ok(lines)
}

async fn summarise(
    paths: &InstallPaths,
    name: &str,
    bytes: &[u8],
) -> anyhow::Result<ComponentSummary> {
    let plugin = load_alone(paths, name, bytes).await?;
    Ok(ComponentSummary {
        imports: plugin.imports.clone(),
        exports: plugin.exports.clone(),
    })
}

/// The component loaded by itself from a scratch directory, as the host would load it.
async fn load_alone(
    paths: &InstallPaths,
    name: &str,
    bytes: &[u8],
) -> anyhow::Result<std::sync::Arc<cordon_runtime::Plugin>> {
    // A fresh private directory (random name, created exclusively, mode 0700): nothing another
    // user planted can be followed or swapped in.
    let scratch = tempfile::Builder::new()
        .prefix("cordon-inspect-")
        .tempdir()
        .context("creating a scratch directory to inspect the plugin")?;
    let file = scratch.path().join(format!("{name}.wasm"));
    std::fs::write(&file, bytes)?;
    let pipeline = RuntimeBuilder::new(scratch.path())
        .config(super::host_secrets::empty_config())
        .cache(paths.cache.clone())
        .build()
        .await?;
    if let Some(rejected) = pipeline.registry().rejected().first() {
        bail!(
            "this is not a plugin cordon can load: {}; nothing was installed",
            rejected.reason
        );
    }
    pipeline
        .registry()
        .plugins()
        .first()
        .cloned()
        .context("the component did not load; nothing was installed")
}

/// What a component's imports let it use once granted, in the grant's own words.
fn capabilities_it_could_use(imports: &[String]) -> Vec<String> {
    let mut needs = Vec::new();
    let mut add = |text: &str| {
        if !needs.iter().any(|n: &String| n == text) {
            needs.push(text.to_string());
        }
    };
    for import in imports {
        if import.starts_with("wasi:filesystem/") {
            add("files (grant directories with `dirs`)");
        } else if import.starts_with("wasi:http/outgoing-handler") {
            add("outbound HTTP (grant origins with `http`)");
        } else if import.starts_with("wasi:cli/environment") {
            add("environment variables (grant names with `env`)");
        } else if import.starts_with("wasi:sockets/") {
            add("sockets (cordon grants none: calls that use them fail)");
        }
    }
    needs
}

/// Whether `text`, written to the config file, would load.
fn config_text_loads(text: &str, paths: &InstallPaths) -> Result<(), String> {
    let base = paths
        .config
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    super::config_file::parse(text, &paths.config, base)
        .map(drop)
        .map_err(|err| err.to_string())
}

/// Writes `bytes` to `target` atomically: a new temp file beside it (random name, created
/// exclusively, so nothing planted there is followed), then a rename over the target (which
/// replaces a symlink there rather than writing through it).
pub(crate) fn install_file(target: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut temp = tempfile::Builder::new()
        .prefix(".cordon-")
        .suffix(".partial")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().sync_all())
        .with_context(|| format!("writing {}", target.display()))?;
    temp.persist(target)
        .map_err(|err| err.error)
        .with_context(|| format!("writing {}", target.display()))?;
    Ok(())
}

/// What `[plugins.NAME]` already grants. A plugin installed under that name would get it without
/// the operator choosing to, so that is refused unless the table pins exactly this component
/// (reinstalling what was granted) or `--force` says to replace the plugin and keep its grants
/// (which the output then lists for review).
fn grants_under_the_name(
    config: &Path,
    name: &str,
    sha256: &str,
    force: bool,
) -> anyhow::Result<Vec<String>> {
    let Ok(text) = std::fs::read_to_string(config) else {
        return Ok(Vec::new());
    };
    let document: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", config.display()))?;
    let Some(entry) = document
        .get("plugins")
        .and_then(|plugins| plugins.get(name))
        .and_then(toml_edit::Item::as_table_like)
    else {
        return Ok(Vec::new());
    };
    let pinned = entry.get("sha256").and_then(toml_edit::Item::as_str);
    let grants = grant_keys(entry);
    if grants.is_empty() || pinned == Some(sha256) || force {
        return Ok(grants);
    }
    bail!(
        "[plugins.{name}] in {} already grants {} to a plugin named {name}; this component (sha256 {sha256}) would get them without you choosing to. Install it under another name with --name, remove those grants first, or pass --force to replace the plugin and keep them; nothing was installed",
        config.display(),
        grants.join(", ")
    )
}

/// The keys of a `[plugins.NAME]` table that grant something: all but its `sha256` pin.
pub(crate) fn grant_keys(entry: &dyn toml_edit::TableLike) -> Vec<String> {
    entry
        .iter()
        .map(|(key, _)| key.to_string())
        .filter(|key| key != "sha256")
        .collect()
}

/// The config file as an editable document that keeps its layout and comments; an empty one when
/// there is no file yet.
pub(crate) fn config_document(config: &Path) -> anyhow::Result<toml_edit::DocumentMut> {
    let text = match std::fs::read_to_string(config) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {}", config.display())),
    };
    text.parse()
        .with_context(|| format!("{} is not valid TOML", config.display()))
}

/// The config with `[plugins.NAME] sha256` set, everything else in the file kept as it is.
fn pinned_config(
    config: &Path,
    name: &str,
    sha256: &str,
) -> anyhow::Result<toml_edit::DocumentMut> {
    let mut document = config_document(config)?;
    let plugins = document
        .entry("plugins")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .context("`plugins` in the config is not a table")?;
    let entry = plugins
        .entry(name)
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .with_context(|| format!("[plugins.{name}] in the config is not a table"))?;
    entry.insert("sha256", toml_edit::value(sha256));
    Ok(document)
}

/// Text from a lock, a registry or a URL, made safe to print (see `report::budget::one_line`).
fn for_terminal(text: &str) -> String {
    cordon_runtime::report::budget::one_line(text)
}

pub(crate) fn load_lock(path: &Path) -> anyhow::Result<Lockfile> {
    if !path.exists() {
        return Ok(Lockfile::default());
    }
    Ok(Lockfile::load(path)?)
}
