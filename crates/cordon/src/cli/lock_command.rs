//! `cordon lock`: approves the plugins as they are (digest, grants, what they declare) and the
//! deployment, keeping the recorded sources (until `cordon remove` drops one), and says what it
//! approved.

use super::Cli;
use cordon_runtime::capabilities::lock::Lockfile;
use cordon_runtime::pipeline::Pipeline;
use cordon_runtime::report::terminal_text::one_line;
use std::process::ExitCode;

impl Cli {
    /// Loads the plugins as they are (unlocked) and writes the lock approving them.
    pub(super) async fn lock(&self) -> anyhow::Result<ExitCode> {
        let file = self.pipeline_loader().config_file()?;
        let config = file.runtime;
        let deployment = cordon_runtime::capabilities::lock::deployment(
            config.audit_path.as_deref(),
            &config.hook_order,
            config.batches.approval.lock_line(),
        );
        let pipeline = self.load_pipeline(config, &file.trust, None).await?;
        self.write_lock(&pipeline, deployment)
    }

    /// Approves every plugin that loaded, and says which did not.
    fn write_lock(&self, pipeline: &Pipeline, deployment: Vec<String>) -> anyhow::Result<ExitCode> {
        let path = self.lock_path();
        let mut lock = Lockfile::default();
        // Where `cordon add` installed plugins from stays recorded until `cordon remove` drops
        // it, whatever loaded this time (a refused plugin's record is what `[trust]` checks it
        // against; dropping it would let it in as one copied by hand); only a record that a
        // loaded plugin of its name no longer matches goes.
        if let Ok(previous) = Lockfile::load(&path) {
            let plugins = pipeline.registry().plugins();
            lock.sources = previous
                .sources
                .into_iter()
                .filter(|(id, source)| {
                    plugins
                        .iter()
                        .find(|plugin| &*plugin.id == id.as_str())
                        .is_none_or(|plugin| hex::encode(plugin.sha256) == source.sha256)
                })
                .collect();
        }
        for plugin in pipeline.registry().plugins() {
            lock.approve(
                &plugin.id,
                &plugin.sha256,
                &plugin.grant,
                cordon_runtime::registry::declarations::lines(plugin),
            );
        }
        let deployment_line = deployment.join("; ");
        lock.approve_deployment(deployment);
        lock.write(&path)?;
        let approved = pipeline.registry().plugins();
        crate::cli::render::stdout_line(&format!(
            "wrote {}: {} plugin(s) approved:",
            one_line(&path.display().to_string()),
            approved.len()
        ))?;
        for plugin in approved {
            let grants = cordon_runtime::capabilities::lock::capabilities(&plugin.grant);
            let grants = if grants.is_empty() {
                "no grants".to_string()
            } else {
                grants.join("; ")
            };
            crate::cli::render::stdout_line(&format!(
                "  {}: {}",
                one_line(&plugin.id),
                one_line(&grants)
            ))?;
            if plugin.hook.is_some() && plugin.grant.hook.is_none() {
                crate::cli::render::stdout_line(&format!(
                    "    (its hook is not granted, so it will not run; grant it with `hook = true` in [plugins.{}])",
                    one_line(&plugin.id)
                ))?;
            }
        }
        crate::cli::render::stdout_line(&format!("  deployment: {}", one_line(&deployment_line)))?;
        for rejected in pipeline.registry().rejected() {
            crate::cli::render::stdout_line(&format!(
                "not approved (refused at load): {}: {}",
                one_line(&rejected.file.display().to_string()),
                one_line(&rejected.reason)
            ))?;
        }
        Ok(ExitCode::SUCCESS)
    }
}
