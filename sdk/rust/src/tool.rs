//! The [`Tool`] trait: one tool, its typed arguments and its metadata (title, annotations, output
//! schema, prompt guidelines, locks).

use crate::{Context, ToolResult};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Whether a tool may run beside other tools of the same batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    /// May run concurrently with the other calls of its batch (the default); [`Tool::LOCKS`]
    /// keeps calls that touch the same thing apart.
    #[default]
    Parallel,
    /// Makes its whole batch run one call at a time, in call order.
    Sequential,
}

/// Hints about what a tool does, for clients deciding whether to ask a person before a call (MCP
/// tool annotations). A hint left `None` is unsaid; clients then assume the cautious value.
///
/// ```
/// use cordon_sdk::Annotations;
/// const READS: Annotations = Annotations::new().read_only().idempotent().closed_world();
/// assert_eq!(READS.read_only, Some(true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Annotations {
    /// It changes nothing outside itself.
    pub read_only: Option<bool>,
    /// When it changes something, it may destroy or overwrite what was there.
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// It reaches an open world (the web) rather than a closed one (granted directories).
    pub open_world: Option<bool>,
}

impl Annotations {
    /// No hints.
    pub const fn new() -> Self {
        Self {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// Changes nothing (and so destroys nothing).
    pub const fn read_only(mut self) -> Self {
        self.read_only = Some(true);
        self.destructive = Some(false);
        self
    }

    /// Changes things and may overwrite or delete what was there.
    pub const fn destructive(mut self) -> Self {
        self.read_only = Some(false);
        self.destructive = Some(true);
        self
    }

    /// Changes things, only adding to them.
    pub const fn additive(mut self) -> Self {
        self.read_only = Some(false);
        self.destructive = Some(false);
        self
    }

    /// The same call again has no further effect.
    pub const fn idempotent(mut self) -> Self {
        self.idempotent = Some(true);
        self
    }

    /// Reaches the open world (the web, other people's systems).
    pub const fn open_world(mut self) -> Self {
        self.open_world = Some(true);
        self
    }

    /// Works only in a closed world (the directories it was granted).
    pub const fn closed_world(mut self) -> Self {
        self.open_world = Some(false);
        self
    }
}

/// One tool. Its JSON Schema is generated from [`Tool::Args`].
pub trait Tool: 'static {
    /// The arguments object. Doc comments on its fields become schema descriptions the model reads.
    type Args: DeserializeOwned + JsonSchema;
    /// Unique tool name: letters, digits, `_` and `-`, at most 64 characters.
    const NAME: &'static str;
    /// Short human-readable title ("Read file"); defaults to the name.
    const TITLE: &'static str = Self::NAME;
    /// What the tool does, when a model should use it, and where its limits are.
    const DESCRIPTION: &'static str;
    /// See [`ExecutionMode`].
    const EXECUTION_MODE: ExecutionMode = ExecutionMode::Parallel;
    /// See [`Annotations`].
    const ANNOTATIONS: Annotations = Annotations::new();
    /// Short lines the agent loop adds to its system prompt while this tool is active (at most 8,
    /// each one line of at most 200 bytes).
    const PROMPT_GUIDELINES: &'static [&'static str] = &[];
    /// JSON pointers into the arguments naming what a call touches (`"/path"`): calls of one batch
    /// with an equal value there run one after another, in call order.
    const LOCKS: &'static [&'static str] = &[];

    /// The JSON Schema of the structured output, if the tool returns one (then every successful
    /// call must return [`crate::Output::structured`] matching it). [`crate::schema_of`] makes one
    /// from a type.
    fn output_schema() -> Option<Value> {
        None
    }

    /// Runs one call. `Err` becomes a `tool_error` (or `capability_denied`) result with its message.
    fn run(&self, args: Self::Args, cx: &Context) -> ToolResult;
}

/// The JSON Schema of `T`, as a tool's parameters or output schema: without the `$schema` and
/// `title` keys models do not need, and with the non-standard integer formats schemars adds
/// (`uint`, `int32`, ...) removed, since strict clients refuse them.
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(T).to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    drop_integer_formats(&mut schema);
    schema
}

/// Removes `format` from integer schemas (schemars' `uint`, `uint32`, `int64`, ...), everywhere.
fn drop_integer_formats(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let integer = match object.get("type") {
                Some(Value::String(kind)) => kind == "integer",
                Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "integer"),
                _ => false,
            };
            if integer {
                object.remove("format");
            }
            object.values_mut().for_each(drop_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_integer_formats),
        _ => {}
    }
}
