//! What contracts 0.3 and 0.4 have the same beyond what 0.2 shares ([`same_since_0_2!`]): a
//! hook's session stages and `session-hook`. Their WIT types differ by version (each `bindgen!`
//! generates its own), their shapes do not; a version's module invokes [`same_since_0_3!`] with
//! `same_in_every_version!(without_hook_info)`.

macro_rules! same_since_0_3 {
    () => {
        fn hook_info(hook: types::HookSpec) -> HookInfo {
            let mut stages: Vec<SessionStage> =
                hook.stages.into_iter().map(stage_from_wit).collect();
            stages.sort();
            stages.dedup();
            HookInfo {
                tools: hook.tools,
                before: hook.before,
                after: hook.after,
                stages,
            }
        }

        fn stage_from_wit(stage: types::SessionStage) -> SessionStage {
            match stage {
                types::SessionStage::SessionStart => SessionStage::SessionStart,
                types::SessionStage::Prompt => SessionStage::Prompt,
                types::SessionStage::ModelRequest => SessionStage::ModelRequest,
                types::SessionStage::ModelResponse => SessionStage::ModelResponse,
                types::SessionStage::Compaction => SessionStage::Compaction,
                types::SessionStage::Stop => SessionStage::Stop,
                types::SessionStage::SessionEnd => SessionStage::SessionEnd,
            }
        }

        fn stage_to_wit(stage: SessionStage) -> types::SessionStage {
            match stage {
                SessionStage::SessionStart => types::SessionStage::SessionStart,
                SessionStage::Prompt => types::SessionStage::Prompt,
                SessionStage::ModelRequest => types::SessionStage::ModelRequest,
                SessionStage::ModelResponse => types::SessionStage::ModelResponse,
                SessionStage::Compaction => types::SessionStage::Compaction,
                SessionStage::Stop => types::SessionStage::Stop,
                SessionStage::SessionEnd => types::SessionStage::SessionEnd,
            }
        }

        /// The hook's decision at `stage`, given the stage's `payload` (JSON text).
        pub async fn session_hook(
            plugin: &CordonPlugin,
            store: &mut Store<CallState>,
            stage: SessionStage,
            payload: &str,
        ) -> wasmtime::Result<SessionDecision> {
            let event = types::SessionEvent {
                stage: stage_to_wit(stage),
                payload: payload.to_string(),
            };
            let decision = plugin
                .cordon_plugin_plugin()
                .call_session_hook(store, &event)
                .await?;
            Ok(SessionDecision {
                block: decision.block,
                replace: decision.replace,
                add_context: decision.add_context,
                only_tools: decision.only_tools,
                drop_calls: decision.drop_calls,
            })
        }
    };
}
