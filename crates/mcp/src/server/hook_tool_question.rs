//! What a hook tool (`hook_tools.rs`) is called with, as Rust types: the tool's input schema is
//! derived from them and a call's arguments are read into them, so the two cannot drift apart.
//! Each field's reader says what to send when the value has the wrong shape, and `null` for a
//! field that may be left out is the same as leaving it out; what depends on the stage (a
//! tool-call stage needs `tool`, after-tool-call needs `result`, a session stage's `payload`
//! fields) is checked where the question is built.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{Deserializer, Error as _};
use serde_json::{Map, Value};

/// The arguments of a hook tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookToolQuestion {
    /// Where the hook is asked: before-tool-call and after-tool-call for a tool call, or a session stage.
    #[serde(deserialize_with = "stage")]
    pub stage: String,
    /// before-tool-call, after-tool-call: the name of the tool called.
    #[serde(default, deserialize_with = "tool")]
    pub tool: Option<String>,
    /// before-tool-call, after-tool-call: the call's arguments (an object, or its JSON text).
    #[serde(default, deserialize_with = "call_arguments")]
    pub arguments: Option<CallArguments>,
    /// after-tool-call: the call's result: its text, or {"text": ..., "is_error": true|false}.
    #[serde(default, deserialize_with = "given_result")]
    pub result: Option<GivenResult>,
    /// A session stage: its event, with the fields docs/session-hooks.md lists for the stage (prompt: {"prompt": ...}; stop: {"answer": ...}); fields left out take empty values.
    #[serde(default, deserialize_with = "payload")]
    pub payload: Option<Map<String, Value>>,
    /// The text of the result: cordon's decision as JSON, or the JSON a Claude Code hook answers with.
    #[serde(default, deserialize_with = "format")]
    #[schemars(extend("enum" = ["cordon", "claude-code"], "default" = "cordon"))]
    pub format: Option<String>,
}

/// A call's arguments as a client gives them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CallArguments {
    Object(Map<String, Value>),
    /// The JSON text of an object.
    Text(String),
}

/// A call's result as a client gives it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GivenResult {
    /// Its text (a success).
    Text(String),
    Full {
        text: String,
        #[serde(default)]
        is_error: bool,
    },
}

/// The names of the arguments, as the schema lists them.
pub fn argument_names() -> Vec<String> {
    input_schema(&[])
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// The input schema of a hook tool asked at `stages` (the only values `stage` takes).
pub fn input_schema(stages: &[&str]) -> Map<String, Value> {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<HookToolQuestion>()
        .to_value();
    schema["properties"]["stage"]["enum"] = Value::from(stages.to_vec());
    let Value::Object(mut schema) = schema else {
        unreachable!("a struct's schema is an object")
    };
    // What a client needs, not how it was made.
    schema.remove("$schema");
    schema.remove("title");
    schema.remove("description");
    schema
}

fn stage<'de, D: Deserializer<'de>>(value: D) -> Result<String, D::Error> {
    String::deserialize(value).map_err(|_| {
        D::Error::custom(
            "`stage` is text: before-tool-call, after-tool-call, or a session stage such as prompt",
        )
    })
}

fn tool<'de, D: Deserializer<'de>>(value: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(value)
        .map_err(|_| D::Error::custom("`tool` is text: the name of the tool called"))
}

fn call_arguments<'de, D: Deserializer<'de>>(value: D) -> Result<Option<CallArguments>, D::Error> {
    Option::<CallArguments>::deserialize(value)
        .map_err(|_| D::Error::custom("`arguments` is a JSON object, or the JSON text of one"))
}

fn given_result<'de, D: Deserializer<'de>>(value: D) -> Result<Option<GivenResult>, D::Error> {
    Option::<GivenResult>::deserialize(value).map_err(|_| {
        D::Error::custom(
            "`result` is the result's text, or {\"text\": ..., \"is_error\": true|false}",
        )
    })
}

fn payload<'de, D: Deserializer<'de>>(value: D) -> Result<Option<Map<String, Value>>, D::Error> {
    Option::<Map<String, Value>>::deserialize(value)
        .map_err(|_| D::Error::custom("`payload` is a JSON object"))
}

fn format<'de, D: Deserializer<'de>>(value: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(value)
        .map_err(|_| D::Error::custom("`format` is \"cordon\" or \"claude-code\""))
}
