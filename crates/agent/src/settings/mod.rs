//! The agent crate's part of cordon.toml, read from the shared
//! [`ConfigDocument`](cordon_runtime::config::ConfigDocument): `[model]` (`model_section.rs`) and
//! the loop's keys of `[agent]` (`loop_section.rs`). Errors name the file and the key, as the
//! runtime's do.

mod loop_section;
mod model_section;
mod routing_section;

pub use loop_section::{AgentSettings, DEFAULT_TOOL_SEARCH_THRESHOLD, ToolSearch};
pub use model_section::{
    Compaction, MIN_CONTEXT_WINDOW, ModelSettings, Provider, STREAM_IDLE_TIMEOUT,
    base_url_credentials,
};
pub use routing_section::RoutingSettings;

use cordon_runtime::config::{ConfigDocument, ConfigError};

/// A key's name within its table, and what is wrong with it.
type KeyError = (String, String);

/// What the agent loop reads of cordon.toml.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionSettings {
    /// The model API the agent loop talks to (`[model]`).
    pub model: ModelSettings,
    /// The loop's steps, system prompt, tool search and reply bounds (`[agent]`).
    pub agent: AgentSettings,
}

impl SessionSettings {
    /// Reads and checks `[model]` and the loop's keys of `[agent]` (and claims them for
    /// [`ConfigDocument::check_all_read`]).
    pub fn from_document(document: &ConfigDocument) -> Result<Self, ConfigError> {
        let model = document
            .table::<model_section::RawModel>("model")?
            .validate()
            .map_err(|(key, message)| document.invalid(format!("model.{key}"), message))?;
        let agent = document
            .keys_of::<loop_section::RawLoop>("agent", loop_section::LOOP_KEYS)?
            .validate()
            .map_err(|(key, message)| document.invalid(format!("agent.{key}"), message))?;
        Ok(Self { model, agent })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(text: &str) -> Result<(SessionSettings, ConfigDocument), ConfigError> {
        let document = ConfigDocument::new(
            text,
            Path::new("cordon.toml"),
            Path::new("."),
            &cordon_runtime::report::secrets::Secrets::default(),
        )?;
        let settings = SessionSettings::from_document(&document)?;
        Ok((settings, document))
    }

    #[test]
    fn the_model_table_and_the_loop_keys_are_read_and_checked_here() {
        let (settings, _) = read(
            "[model]\nmodel = \"m\"\ntimeout = \"90s\"\n[agent]\nmax_steps = 7\nmax_concurrency = 2\n",
        )
        .unwrap();
        assert_eq!(settings.model.model.as_deref(), Some("m"));
        assert_eq!(settings.agent.max_steps, 7);
        for (text, key) in [
            ("[model]\ntemperature = 9.0\n", "model.temperature"),
            ("[model]\nbase_url = \"ftp://x\"\n", "model.base_url"),
            ("[agent]\nmax_steps = 0\n", "agent.max_steps"),
            (
                "[agent]\ntool_search_threshold = 0\n",
                "agent.tool_search_threshold",
            ),
            ("[agent.routing]\nmode = \"always\"\n", "agent.routing.mode"),
            (
                "[agent.routing]\nbase_url = \"x\"\n",
                "agent.routing.base_url",
            ),
            ("[agent.routing]\nmodl = \"m\"\n", "unknown field `modl`"),
        ] {
            let err = read(text).unwrap_err().to_string();
            assert!(
                err.contains(key) && err.contains("cordon.toml"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn a_misspelt_model_key_is_named_with_its_line() {
        let err = read("[model]\n\nmodle = \"m\"\n").unwrap_err().to_string();
        assert!(
            err.contains("unknown field `modle`") && err.contains("line 3"),
            "{err}"
        );
    }

    #[test]
    fn a_key_of_agent_that_neither_the_runtime_nor_the_loop_reads_is_named() {
        let (_, document) = read("[agent]\nmax_steps = 3\n\nmax_stpes = 4\n").unwrap();
        cordon_runtime::config::Config::from_document(&document).unwrap();
        let err = document.check_all_read().unwrap_err().to_string();
        assert!(
            err.contains("unknown key `agent.max_stpes`")
                && err.contains("line 4")
                && err.contains("`max_steps`")
                && err.contains("`max_concurrency`"),
            "{err}"
        );
    }

    #[test]
    fn model_settings_are_read_and_checked() {
        let (config, _) = read(
        "[model]\nprovider = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1/\"\nmodel = \"m\"\napi_key_env = \"MY_KEY\"\ntimeout = \"30s\"\ntemperature = 0.2\nmax_tokens = 512\nstream = false\nretries = 2\nretry_delay = \"10ms\"\nparse_text_tool_calls = true\ncontext_window = 8192\ncompaction = \"digest\"\n",
    )
    .unwrap();
        assert_eq!(
            config.model,
            ModelSettings {
                provider: Provider::Anthropic,
                base_url: Some("http://127.0.0.1:9/v1".into()),
                model: Some("m".into()),
                api_key_env: Some("MY_KEY".into()),
                timeout: Some(std::time::Duration::from_secs(30)),
                context_window: Some(8192),
                compaction: Compaction::Digest,
                temperature: Some(0.2),
                max_tokens: Some(512),
                stream: false,
                retries: 2,
                retry_delay: std::time::Duration::from_millis(10),
                parse_text_tool_calls: true,
            }
        );
        assert_eq!(read("").unwrap().0.model, ModelSettings::default());
        for (text, key) in [
            ("[model]\nprovider = \"gemini\"", "provider"),
            ("[model]\nbase_url = \"localhost:8080\"", "model.base_url"),
            ("[model]\napi_key_env = \"KEY=sk-123\"", "model.api_key_env"),
            ("[model]\napi_key = \"sk-123\"", "api_key"),
            ("[model]\ntemperature = 7.0", "model.temperature"),
            ("[model]\ntimeout = \"soon\"", "model.timeout"),
            ("[model]\nmax_tokens = 0", "model.max_tokens"),
            ("[model]\ncontext_window = 100", "model.context_window"),
            ("[model]\ncompaction = \"drop\"", "compaction"),
            ("[agent]\ntool_search = \"sometimes\"", "tool_search"),
        ] {
            let err = read(text).expect_err(text).to_string();
            assert!(err.contains(key), "{text}: {err}");
        }
    }
}
