//! `cordon run` and `cordon chat`: the agent loop over the loaded pipeline; a chat follows live
//! reloads of the plugins and the config.

use super::{Cli, agent::SessionArgs, approval_prompt, live_reload};
use std::path::Path;
use std::process::ExitCode;

impl Cli {
    /// `cordon run [PROMPT]`: one task; the answer on stdout.
    pub(super) async fn run_task(
        &self,
        prompt: Option<&str>,
        output_schema: Option<&Path>,
        session: &SessionArgs,
    ) -> anyhow::Result<ExitCode> {
        let loaded = self.load(false).await?;
        crate::cli::agent::run(
            loaded.pipeline,
            &loaded.model,
            &loaded.agent,
            session,
            prompt,
            output_schema,
            approval_prompt::approver(self.yes),
        )
        .await
    }

    /// `cordon chat`: a conversation, one prompt per line, on the pipeline as it is reloaded.
    pub(super) async fn chat(
        &self,
        session: &SessionArgs,
        no_watch: bool,
    ) -> anyhow::Result<ExitCode> {
        let loaded = self.load(!no_watch).await?;
        let (updates, current) = tokio::sync::watch::channel(loaded.pipeline.clone());
        let reloads = tokio::spawn(live_reload::reload_while_running(
            self.pipeline_loader(),
            live_reload::SessionPipeline(updates),
            loaded.watcher,
        ));
        let _stop_reloads = live_reload::AbortOnDrop(reloads);
        crate::cli::agent::chat(
            loaded.pipeline,
            current,
            &loaded.model,
            &loaded.agent,
            session,
            approval_prompt::approver(self.yes),
        )
        .await
    }
}
