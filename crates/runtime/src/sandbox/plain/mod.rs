//! The third contract: a component built for a WIT world of its own, with no cordon SDK. Each
//! function it exports (in its world, or in an exported interface) is a tool: its name, parameters
//! schema, output schema and description come from the component's types (and the doc comments it
//! carries), with what the operator adds in `[plugins.ID.tools.NAME]`; each call's JSON arguments
//! become WIT values and its return value comes back as JSON. Everything above the sandbox sees the
//! same declared tools, outputs and failures as for an SDK plugin.

pub(crate) mod docs;
mod exports;
mod json_schema;
mod json_to_val;
mod lift_weight;
mod refusal;
mod shape;
mod tool_names;
mod val_to_json;

use crate::capabilities::grant_notice::description_sentence;
use crate::capabilities::tool_overrides::ToolOverride;
use crate::report::{Content, ErrorKind};
use crate::sandbox::call_state::CallState;
use crate::sandbox::contract::host_terms::{
    Declared, DeclaredTool, ExecutionMode, GuestCall, GuestOutput, ToolAnnotations,
};
use crate::sandbox::failure::Failure;
use exports::exported_functions;
pub use exports::is_command;
pub use refusal::PlainRefusal;
use serde_json::{Value, json};
use shape::{Shape, ShapeBudget, Unsupported, shape_of};
use std::collections::BTreeMap;
use std::sync::Arc;
use tool_names::{FunctionPath, tool_names};
use wasmtime::component::{Component, ComponentExportIndex, InstancePre, Val};
use wasmtime::{Engine, Store};

pub use shape::MAX_SHAPE_DEPTH;

/// What loading a plain component or a command needs besides the component: the plugin's id, what
/// the operator says about its tools, and the doc comments it carries (read only for plain
/// components, since reading them needs the file's bytes).
pub(crate) struct PlainSetup<'a> {
    pub plugin: &'a str,
    /// What the plugin is granted: derived descriptions end with it.
    pub grant: &'a crate::capabilities::grant::PluginGrant,
    pub overrides: &'a BTreeMap<String, ToolOverride>,
    pub docs: &'a docs::ComponentDocs,
}

/// One exported function offered as a tool.
pub(crate) struct PlainFunction {
    pub path: FunctionPath,
    /// The name the tool is offered under.
    pub tool: String,
    export: ComponentExportIndex,
    params: Vec<(String, Shape)>,
    result: Option<Shape>,
    /// What the call's lift budget is divided by for this result's type ([`lift_weight`]).
    lift_divisor: u64,
    declared: DeclaredTool,
}

/// A plain component's functions, read at load.
pub(crate) struct PlainFunctions {
    functions: Vec<PlainFunction>,
}

impl PlainFunctions {
    /// Reads the functions `component` exports, as tools of plugin `plugin`, with the operator's
    /// `overrides` (keyed by the derived names).
    pub fn read(
        engine: &Engine,
        component: &Component,
        setup: &PlainSetup<'_>,
    ) -> Result<Self, PlainRefusal> {
        let (plugin, overrides, docs) = (setup.plugin, setup.overrides, setup.docs);
        let grants = description_sentence(setup.grant, None);
        let exports = exported_functions(engine, component);
        if exports.is_empty() {
            let mut listed: Vec<String> = component
                .component_type()
                .exports(engine)
                .map(|(name, _)| name.to_string())
                .collect();
            if listed.is_empty() {
                listed.push("nothing".into());
            }
            return Err(PlainRefusal::NoFunctions {
                exports: listed.join(", "),
            });
        }
        let paths: Vec<FunctionPath> = exports.iter().map(|e| e.path.clone()).collect();
        let derived = tool_names(&paths);
        let unknown: Vec<&str> = overrides
            .keys()
            .filter(|name| !derived.contains(name))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let mut known = derived.clone();
            known.sort();
            return Err(PlainRefusal::UnknownOverride {
                plugin: plugin.to_string(),
                unknown: unknown.join(", "),
                known: known.join(", "),
            });
        }
        if let Some((tool, _)) = overrides
            .iter()
            .find(|(_, operator)| operator.ok_exit_codes.is_some())
        {
            return Err(PlainRefusal::ExitCodesOfFunction {
                plugin: plugin.to_string(),
                tool: tool.clone(),
            });
        }
        let mut functions = Vec::new();
        let mut unsupported = Vec::new();
        let mut budget =
            ShapeBudget::new(crate::sandbox::plugin::declared::MAX_SCHEMA_BYTES_PER_PLUGIN);
        for (export, derived_name) in exports.into_iter().zip(derived) {
            let operator = overrides.get(&derived_name).cloned().unwrap_or_default();
            if operator.skip {
                continue;
            }
            let signature = read_signature(&export.func, &mut budget);
            if budget.is_spent() {
                return Err(PlainRefusal::TypesTooLarge {
                    plugin: plugin.to_string(),
                    function: export.path.display().to_string(),
                    limit: crate::sandbox::plugin::declared::MAX_SCHEMA_BYTES_PER_PLUGIN,
                });
            }
            match signature {
                Ok((params, result)) => {
                    let tool = operator.name.clone().unwrap_or(derived_name);
                    let declared = declare(
                        &export.path,
                        &tool,
                        &params,
                        result.as_ref(),
                        &operator,
                        docs,
                        &grants,
                    );
                    functions.push(PlainFunction {
                        path: export.path,
                        tool,
                        export: export.index,
                        params,
                        lift_divisor: result.as_ref().map_or(1, lift_weight::lift_divisor),
                        result,
                        declared,
                    });
                }
                Err(Unsupported { at, what }) => unsupported.push(format!(
                    "its function `{}` (tool {derived_name}) has {what} in its {at}",
                    export.path.display()
                )),
            }
        }
        if !unsupported.is_empty() {
            return Err(PlainRefusal::UnsupportedTypes {
                plugin: plugin.to_string(),
                functions: unsupported,
            });
        }
        if functions.is_empty() {
            return Err(PlainRefusal::AllSkipped);
        }
        for (index, function) in functions.iter().enumerate() {
            if let Some(other) = functions[..index].iter().find(|f| f.tool == function.tool) {
                return Err(PlainRefusal::RenamedTwice {
                    tools: format!(
                        "`{}` and `{}`",
                        other.path.display(),
                        function.path.display()
                    ),
                    name: function.tool.clone(),
                });
            }
        }
        Ok(Self { functions })
    }

    pub fn declared(&self) -> Declared {
        Declared {
            tools: self.functions.iter().map(|f| f.declared.clone()).collect(),
            hook: None,
            offered: Default::default(),
        }
    }

    fn function(&self, tool: &str) -> Option<&PlainFunction> {
        self.functions.iter().find(|function| function.tool == tool)
    }
}

/// A plain component linked, ready to instantiate, with its functions.
pub(crate) struct PlainPre {
    pub instance_pre: InstancePre<CallState>,
    pub functions: Arc<PlainFunctions>,
}

/// One instantiated plain component.
pub(crate) struct PlainInstance {
    pub instance: wasmtime::component::Instance,
    pub functions: Arc<PlainFunctions>,
}

impl PlainInstance {
    /// Calls the function behind `call`'s tool with its arguments, and turns what it returned into
    /// an output (`ok`, or any plain value) or a failure (`err`).
    pub async fn execute(
        &self,
        store: &mut Store<CallState>,
        call: &GuestCall,
    ) -> wasmtime::Result<Result<GuestOutput, Failure>> {
        let Some(function) = self.functions.function(&call.name) else {
            return Ok(Err(Failure::new(
                ErrorKind::NotFound,
                format!("this component has no tool {:?}", call.name),
                json!({}),
            )));
        };
        let arguments: Value = match serde_json::from_str(&call.arguments) {
            Ok(arguments) => arguments,
            Err(err) => {
                return Ok(Err(Failure::new(
                    ErrorKind::InvalidArguments,
                    format!("the arguments are not JSON: {err}"),
                    json!({}),
                )));
            }
        };
        let params = match json_to_val::arguments_to_vals(&function.params, &arguments) {
            Ok(params) => params,
            Err(mismatch) => {
                return Ok(Err(Failure::new(
                    ErrorKind::InvalidArguments,
                    format!(
                        "The arguments do not fit `{}`'s WIT types: {mismatch}. Fix that argument and call again.",
                        function.tool
                    ),
                    json!({ "pointer": mismatch.pointer, "problem": mismatch.message }),
                )));
            }
        };
        let Some(func) = self.instance.get_func(&mut *store, function.export) else {
            return Ok(Err(Failure::trap(
                format!("the component has no export `{}`", function.path.display()),
                "",
            )));
        };
        if function.lift_divisor > 1 {
            // A result type that lifts to more than wasmtime charges gets that much less.
            let fuel = store.hostcall_fuel() / function.lift_divisor as usize;
            store.set_hostcall_fuel(fuel);
        }
        let mut results = vec![Val::Bool(false); usize::from(function.result.is_some())];
        func.call_async(&mut *store, &params, &mut results).await?;
        drop(params);
        let state = store.data();
        let denied = |message: &str| state.refusal_behind(message);
        // The JSON is written within what is left of the output limit; the lifted value itself
        // was bounded by the call's lift budget as wasmtime copied it out.
        let limit = usize::try_from(state.push_budget()).unwrap_or(usize::MAX);
        Ok(
            outcome(function, results.pop(), &denied, limit).map_err(|failure| match failure {
                Converted::Failed(failure) => failure,
                Converted::TooLarge => Failure::new(
                    ErrorKind::ToolError,
                    format!(
                        "`{}` returned a result larger than what is left of its plugin's output limit ({} for this call); cordon stopped reading it there. Ask for less at a time (use offsets, limits or filters).",
                        function.tool,
                        crate::sandbox::failure::human_bytes(limit as u64)
                    ),
                    json!({ "limit": "output", "limitBytes": limit }),
                ),
            }),
        )
    }
}

type Signature = (Vec<(String, Shape)>, Option<Shape>);

fn read_signature(
    func: &wasmtime::component::types::ComponentFunc,
    budget: &mut ShapeBudget,
) -> Result<Signature, Unsupported> {
    let params = func
        .params()
        .map(|(name, ty)| {
            Ok((
                name.to_string(),
                shape_of(&ty, &format!("parameter {name:?}"), budget)?,
            ))
        })
        .collect::<Result<Vec<_>, Unsupported>>()?;
    let result = match func.results().next() {
        Some(ty) => Some(shape_of(&ty, "result", budget)?),
        None => None,
    };
    Ok((params, result))
}

/// The tool as declared to everything above the sandbox.
fn declare(
    path: &FunctionPath,
    tool: &str,
    params: &[(String, Shape)],
    result: Option<&Shape>,
    operator: &ToolOverride,
    docs: &docs::ComponentDocs,
    grants: &str,
) -> DeclaredTool {
    let mut params = params.to_vec();
    let mut result = result.cloned();
    docs.lay_over(path, &mut params, result.as_mut());
    let mut parameters = json_schema::parameters_schema(&params);
    if !operator.examples.is_empty() {
        parameters["examples"] = Value::Array(operator.examples.clone());
    }
    // The operator's description is theirs to write; a derived one ends with the grants.
    let description = operator.description.clone().unwrap_or_else(|| {
        let derived = docs
            .function(path)
            .map(str::to_string)
            .unwrap_or_else(|| signature_description(path, &params, result.as_ref()));
        format!("{} {grants}", derived.trim_end())
    });
    DeclaredTool {
        name: tool.to_string(),
        title: operator.title.clone().unwrap_or_default(),
        description,
        parameters: parameters.to_string(),
        output_schema: success_shape(result.as_ref())
            .map(|shape| json_schema::output_schema(shape).to_string()),
        execution_mode: if operator.sequential == Some(true) {
            ExecutionMode::Sequential
        } else {
            ExecutionMode::Parallel
        },
        annotations: ToolAnnotations {
            read_only: operator.read_only,
            destructive: operator.destructive,
            idempotent: operator.idempotent,
            open_world: operator.open_world,
        },
        prompt_guidelines: Vec::new(),
        locks: Vec::new(),
    }
}

/// What a successful call carries: the `ok` side of a `result`, or the plain value.
fn success_shape(result: Option<&Shape>) -> Option<&Shape> {
    match result? {
        Shape::Result { ok, .. } => ok.as_deref(),
        other => Some(other),
    }
}

/// A description for a function whose component carries no doc comment: its WIT signature.
fn signature_description(
    path: &FunctionPath,
    params: &[(String, Shape)],
    result: Option<&Shape>,
) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|(name, shape)| format!("{}: {}", shape::json_name(name), short_wit(shape)))
        .collect();
    let returns = result
        .map(|shape| format!(" -> {}", short_wit(shape)))
        .unwrap_or_default();
    let mut text = format!("Calls `{}({}){returns}`", path.display(), params.join(", "));
    if matches!(result, Some(Shape::Result { .. })) {
        text.push_str("; an `err` comes back as an error result");
    }
    text.push('.');
    text
}

/// The WIT of a type with records, variants, enums and flags named by their kind only, so a
/// signature stays one readable line (the schema says the rest).
fn short_wit(shape: &Shape) -> String {
    match shape {
        Shape::Record { .. } => "record".into(),
        Shape::Variant { .. } => "variant".into(),
        Shape::Enum { .. } => "enum".into(),
        Shape::Flags { .. } => "flags".into(),
        Shape::List(item) => format!("list<{}>", short_wit(item)),
        Shape::FixedList(item, len) => format!("list<{}, {len}>", short_wit(item)),
        Shape::Option(inner) => format!("option<{}>", short_wit(inner)),
        Shape::Map(key, value) => format!("map<{}, {}>", short_wit(key), short_wit(value)),
        Shape::Tuple(items) => format!(
            "tuple<{}>",
            items.iter().map(short_wit).collect::<Vec<_>>().join(", ")
        ),
        Shape::Result { ok, err } => {
            let side = |part: &Option<Box<Shape>>| {
                part.as_deref().map_or_else(|| "_".to_string(), short_wit)
            };
            match (ok, err) {
                (None, None) => "result".into(),
                _ => format!("result<{}, {}>", side(ok), side(err)),
            }
        }
        other => other.wit(),
    }
}

/// Why a return value did not become an output.
enum Converted {
    /// A failure to report as it is (an `err`, or a value of the wrong shape).
    Failed(Failure),
    /// Its JSON would have been longer than the output limit left.
    TooLarge,
}

impl Converted {
    fn from(problem: val_to_json::Unconvertible, function: &PlainFunction) -> Self {
        match problem {
            val_to_json::Unconvertible::TooLarge => Self::TooLarge,
            val_to_json::Unconvertible::Shape(problem) => Self::Failed(Failure::new(
                ErrorKind::ToolError,
                format!(
                    "`{}` returned a value cordon cannot pass on: {problem}. This is a bug in the tool, not in your request.",
                    function.tool
                ),
                json!({ "problem": problem }),
            )),
        }
    }
}

/// The call's output from the function's return value, or the failure an `err` stands for (a
/// `capability_denied` one when the host refused the call something on the way). The JSON is
/// written straight from the value, at most `limit` bytes of it.
fn outcome(
    function: &PlainFunction,
    returned: Option<Val>,
    denied: &dyn Fn(&str) -> Option<String>,
    limit: usize,
) -> Result<GuestOutput, Converted> {
    let (Some(shape), Some(val)) = (&function.result, returned) else {
        return Ok(success(None, None));
    };
    let text_of = |shape: &Shape, val: &Val| {
        val_to_json::val_to_json_text(shape, val, limit)
            .map_err(|problem| Converted::from(problem, function))
    };
    let Shape::Result { ok, err } = shape else {
        let json = text_of(shape, &val)?;
        // The lifted value is not needed past here: gone before the text forms are made.
        drop(val);
        return Ok(success(Some(shape), Some(json)));
    };
    let mismatch = || {
        Converted::from(
            val_to_json::Unconvertible::Shape(format!(
                "the result: the component returned a value that is not a {}",
                shape.wit()
            )),
            function,
        )
    };
    let Val::Result(side) = val else {
        return Err(mismatch());
    };
    let error = match (side, ok.as_deref(), err.as_deref()) {
        (Ok(Some(payload)), Some(ok), _) => {
            let json = text_of(ok, &payload)?;
            drop(payload);
            return Ok(success(Some(ok), Some(json)));
        }
        (Ok(None), None, _) => return Ok(success(None, None)),
        (Err(Some(payload)), _, Some(err)) => {
            let json = text_of(err, &payload)?;
            serde_json::from_str(&json).unwrap_or(Value::String(json))
        }
        (Err(None), _, None) => Value::Null,
        _ => return Err(mismatch()),
    };
    let text = match &error {
        Value::String(text) => text.clone(),
        Value::Null => format!("`{}` returned an error", function.tool),
        other => other.to_string(),
    };
    Err(Converted::Failed(match denied(&text) {
        Some(refusal) => Failure::new(
            ErrorKind::CapabilityDenied,
            format!(
                "{text} (the host refused it {refusal}; that is outside what this plugin was granted)"
            ),
            json!({ "error": error, "refused": refusal }),
        ),
        None => Failure::new(ErrorKind::ToolError, text, json!({ "error": error })),
    }))
}

/// A successful output from the value's JSON text: as text for the model (a JSON string as the
/// string itself, anything else as the JSON) and as structured output (a record as itself,
/// anything else under `result`).
fn success(shape: Option<&Shape>, json: Option<String>) -> GuestOutput {
    let (text, structured) = match (shape, json) {
        (Some(shape), Some(json)) => {
            let structured = match shape {
                Shape::Record { .. } => json.clone(),
                _ => format!("{{\"result\":{json}}}"),
            };
            let text = if json.starts_with('"') {
                serde_json::from_str::<String>(&json).unwrap_or(json)
            } else {
                json
            };
            (text, Some(structured))
        }
        _ => ("done".to_string(), None),
    };
    GuestOutput {
        content: vec![Content::Text { text }],
        structured,
        details: String::new(),
        is_error: false,
    }
}
