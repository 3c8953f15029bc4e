//! The plugin's settings (`[plugins.ID.settings]` in cordon.toml) as `wasi:config/store`, the
//! interface Wassette and other hosts give components their configuration through, so a
//! third-party component reads its settings the way its author wrote it to. Each call sees only
//! its own plugin's table: a top-level key is a config key; a string is its value as written,
//! anything else (a number, a boolean, a table, an array) its JSON text. The plugin's `secrets`
//! are keys too, in tool calls and hooks (not in `describe`, which is granted nothing). The
//! interface is linked under each version toolchains have published it as.

use crate::sandbox::call_state::CallState;
use serde_json::Value;
use wasmtime::StoreContextMut;
use wasmtime::component::{ComponentType, Lift, Linker, Lower};

/// The versions of `wasi:config/store` the host provides (the proposal's draft, as Wassette's
/// components import it, and its release candidate).
pub const VERSIONS: [&str; 2] = ["0.2.0-draft", "0.2.0-rc.1"];

/// `wasi:config/store`'s `error`. Reading a settings table cannot fail, so the host never
/// returns one; the type is there so the functions' signatures match the interface.
#[derive(ComponentType, Lift, Lower, Clone, Debug)]
#[component(variant)]
pub enum ConfigError {
    #[component(name = "upstream")]
    Upstream(String),
    #[component(name = "io")]
    Io(String),
}

/// Links `get` and `get-all` of every version in [`VERSIONS`].
pub fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    for version in VERSIONS {
        let mut store = linker.instance(&format!("wasi:config/store@{version}"))?;
        store.func_wrap(
            "get",
            |store: StoreContextMut<'_, CallState>, (key,): (String,)| {
                let state = store.data();
                let value = settings_of(state).get(&key).map(config_value).or_else(|| {
                    state
                        .config_secrets()
                        .iter()
                        .find(|secret| secret.key == key)
                        .map(|secret| secret.value().to_string())
                });
                Ok((Ok::<_, ConfigError>(value),))
            },
        )?;
        store.func_wrap(
            "get-all",
            |store: StoreContextMut<'_, CallState>, (): ()| {
                let state = store.data();
                let all: Vec<(String, String)> = settings_of(state)
                    .iter()
                    .map(|(key, value)| (key.clone(), config_value(value)))
                    .chain(
                        state
                            .config_secrets()
                            .iter()
                            .map(|secret| (secret.key.clone(), secret.value().to_string())),
                    )
                    .collect();
                Ok((Ok::<_, ConfigError>(all),))
            },
        )?;
    }
    Ok(())
}

/// The call's plugin's settings table (empty when it has none).
fn settings_of(state: &CallState) -> serde_json::Map<String, Value> {
    match serde_json::from_str(state.settings_text()) {
        Ok(Value::Object(table)) => table,
        _ => serde_json::Map::new(),
    }
}

/// A setting as a config value: a string as written, anything else as its JSON text.
fn config_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_values_as_written_and_the_rest_is_json() {
        assert_eq!(config_value(&json!("metric")), "metric");
        assert_eq!(config_value(&json!(3)), "3");
        assert_eq!(config_value(&json!(true)), "true");
        assert_eq!(config_value(&json!({"a": [1]})), r#"{"a":[1]}"#);
    }
}
