//! A plugin's session hook (contract 0.3): called at one stage of an agent session, in a fresh
//! sandbox with the plugin's grants and limits, like its tool hooks. A trap, a timeout or a
//! plugin of a contract without session stages is a [`Failure`]; what the decision may do at the
//! stage is checked by the pipeline.

use super::Plugin;
use super::run::Grants;
use crate::report::ErrorKind;
use crate::sandbox::contract::host_terms::{SessionDecision, SessionStage};
use crate::sandbox::failure::Failure;

impl Plugin {
    /// Runs this plugin's session hook at `stage` with the stage's `payload` (a JSON object,
    /// already bounded and scrubbed of secrets). `call_id` names the sandbox in logs and events.
    pub(crate) async fn session_hook(
        &self,
        call_id: &str,
        stage: SessionStage,
        payload: &serde_json::Value,
        options: &super::CallOptions,
    ) -> Result<SessionDecision, Failure> {
        let payload = payload.to_string();
        let what = format!("{stage} hook of {}", self.id);
        let (decision, _) = self
            .in_sandbox(
                call_id,
                &what,
                Grants::granted(),
                options,
                move |store, plugin| {
                    Box::pin(async move { plugin.session_hook(store, stage, &payload).await })
                },
            )
            .await?;
        decision.ok_or_else(|| {
            Failure::new(
                ErrorKind::ToolError,
                format!("{what}: the plugin's contract has no session stages"),
                serde_json::Value::Null,
            )
        })
    }
}
