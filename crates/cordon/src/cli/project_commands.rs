//! The commands that need no pipeline: `cordon new` and `build` (plugin projects), `add`,
//! `sync`, `remove` and `push` (installed plugins), and `test` (the conformance run).

use super::{Cli, config_file, install, plugin_test, render, uninstall};
use anyhow::bail;
use cordon_runtime::report::terminal_text::one_line;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `cordon add` was given.
pub(super) struct AddArgs<'a> {
    pub reference: Option<&'a str>,
    pub name: Option<&'a str>,
    pub sha256: Option<&'a str>,
    pub force: bool,
    pub policy: Option<&'a Path>,
    pub allow_broad_grants: bool,
}

/// What `cordon test` was given.
pub(super) struct TestArgs<'a> {
    pub files: &'a [PathBuf],
    pub cases: Option<&'a Path>,
    pub json: bool,
    pub deny_warnings: bool,
    pub time_budget: std::time::Duration,
}

impl Cli {
    /// `cordon new NAME`: a plugin project from a working template.
    pub(super) fn new_project(
        &self,
        name: &str,
        lang: cordon_scaffold::Language,
        template: cordon_scaffold::Template,
    ) -> anyhow::Result<ExitCode> {
        let cache = cordon_runtime::cordon_cache_dir();
        let project =
            cordon_scaffold::create(name, lang, template, &self.plugins, cache.as_deref())?;
        render::stdout_line(&format!(
            "created {}; build it with: cordon build {}",
            project.display(),
            project.display()
        ))?;
        Ok(ExitCode::SUCCESS)
    }

    /// `cordon build [DIR]`: a plugin project into plugins/NAME.wasm.
    pub(super) fn build_project(
        &self,
        dir: Option<&Path>,
        name: Option<&str>,
        force: bool,
    ) -> anyhow::Result<ExitCode> {
        let project = dir.unwrap_or(Path::new("."));
        let plugins = plugins_dir_for(project, &self.plugins);
        let cache = cordon_runtime::cordon_cache_dir();
        let built = cordon_scaffold::build(
            project,
            &cordon_scaffold::BuildOptions {
                plugins: &plugins,
                name,
                force,
                records: cordon_scaffold::BuildRecords::in_cache(cache.as_deref()),
                cache: cache.as_deref(),
                finish: Some(&embed_skills),
            },
        )?;
        render::stdout_line(&format!(
            "built {}{}",
            one_line(&built.path.display().to_string()),
            if built.reused {
                " (its inputs are those of an earlier build: its component was reused)"
            } else {
                ""
            }
        ))?;
        Ok(ExitCode::SUCCESS)
    }

    /// `cordon add REF` (or, with `--locked` and no REF, `cordon sync`).
    pub(super) async fn add(&self, args: AddArgs<'_>) -> anyhow::Result<ExitCode> {
        let paths = self.install_paths();
        match (args.reference, self.locked) {
            (None, true) => install::sync(&paths).await,
            (Some(_), true) => bail!(
                "--locked installs exactly what the lockfile records: give no REF (or use `cordon sync`)"
            ),
            (None, false) => bail!(
                "give the plugin to add: oci://HOST/REPOSITORY:TAG, https://…/NAME.wasm --sha256 HEX, or a path"
            ),
            (Some(reference), false) => {
                let options = install::AddOptions {
                    name: args.name,
                    sha256: args.sha256,
                    force: args.force,
                    policy: args.policy,
                    yes: self.yes,
                    allow_broad_grants: args.allow_broad_grants,
                };
                install::add(&paths, reference, &options).await
            }
        }
    }

    /// `cordon remove NAME`.
    pub(super) fn remove(&self, name: &str) -> anyhow::Result<ExitCode> {
        if self.locked {
            bail!(
                "--locked keeps exactly the approved set: remove without it, then run `cordon lock`"
            );
        }
        uninstall::remove(&self.install_paths(), name)
    }

    /// `cordon test [PLUGIN.wasm]...`: grants only from an explicit --config, since examples run
    /// for real.
    pub(super) async fn test(&self, args: TestArgs<'_>) -> anyhow::Result<ExitCode> {
        // The config's grants come with its [trust]: a plugin it would refuse at load is refused
        // here too, before its examples run with those grants.
        let (config, admission) = match &self.config {
            Some(path) => {
                let file = config_file::load(path)?;
                let admission = super::signatures::admission(&file.trust, &self.lock_path())?;
                (file.runtime, admission)
            }
            None => (super::host_secrets::empty_config(), None),
        };
        plugin_test::run(plugin_test::PluginTest {
            files: args.files.to_vec(),
            cases: args.cases.map(Path::to_path_buf),
            plugins_dir: self.plugins.clone(),
            config,
            admission,
            lock_path: self.lock_path(),
            cache: self.install_paths().cache,
            json: args.json,
            deny_warnings: args.deny_warnings,
            time_budget: args.time_budget,
        })
        .await
    }
}

/// Where a build of `project` goes: `plugins`, unless that lies inside the project itself (a
/// build run from inside a `cordon new` project, where `plugins/` names a directory of the
/// project): then the directory holding the project, where `cordon new` put it.
fn plugins_dir_for(project: &Path, plugins: &Path) -> PathBuf {
    let (Ok(project), Ok(resolved)) = (
        project.canonicalize(),
        std::path::absolute(plugins).map(|path| {
            // The plugins directory may not exist yet: resolve what does.
            match (path.parent().map(Path::canonicalize), path.file_name()) {
                (Some(Ok(parent)), Some(name)) => parent.join(name),
                _ => path,
            }
        }),
    ) else {
        return plugins.to_path_buf();
    };
    match project.parent() {
        Some(holder) if resolved.starts_with(&project) => holder.to_path_buf(),
        _ => plugins.to_path_buf(),
    }
}

/// Embeds the skills in the project's `skills/` folder (one folder per skill, each with a
/// `SKILL.md`) into the built component, checked as loading checks them; a component built
/// without the folder carries none.
fn embed_skills(project: &Path, component: &Path) -> Result<(), String> {
    use cordon_runtime::skills::embedded;
    let payload = embedded::section_for_folder(&project.join("skills"))
        .map_err(|reason| format!("its skills are refused: {reason}"))?;
    let bytes =
        std::fs::read(component).map_err(|err| format!("the component cannot be read ({err})"))?;
    let finished = embedded::replace_section(&bytes, payload.as_deref())
        .map_err(|reason| format!("its skills cannot be embedded: {reason}"))?;
    if finished != bytes {
        std::fs::write(component, finished)
            .map_err(|err| format!("the component cannot be written ({err})"))?;
    }
    Ok(())
}
