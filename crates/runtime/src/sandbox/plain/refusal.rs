//! Why a plain component's exports cannot be offered as tools: each refusal names what was wrong
//! and the cordon.toml setting that gets past it.

use crate::sandbox::plugin::component_outline::WHAT_A_PLUGIN_IS;

/// Why a component's exports cannot be offered as tools.
#[derive(Debug, thiserror::Error)]
pub enum PlainRefusal {
    #[error(
        "it exports no functions (it exports: {exports}); {}",
        WHAT_A_PLUGIN_IS
    )]
    NoFunctions { exports: String },
    #[error(
        "{}; JSON cannot carry these types. Leave such functions out with `skip = true` in [plugins.{plugin}.tools.NAME] to load the others",
        .functions.join("; ")
    )]
    UnsupportedTypes {
        plugin: String,
        functions: Vec<String>,
    },
    #[error(
        "cordon.toml names tools it does not have in [plugins.{plugin}.tools]: {unknown}; its tools are: {known}"
    )]
    UnknownOverride {
        plugin: String,
        unknown: String,
        known: String,
    },
    #[error("cordon.toml renames {tools} to one name, {name:?}; give each tool a name of its own")]
    RenamedTwice { tools: String, name: String },
    #[error(
        "cordon.toml sets `ok_exit_codes` for {tool} in [plugins.{plugin}.tools.{tool}], but only a command (a `wasi:cli/run` program) has an exit status; a function's failure is its `result`'s error"
    )]
    ExitCodesOfFunction { plugin: String, tool: String },
    #[error("every function it exports is left out with `skip = true`; nothing would be offered")]
    AllSkipped,
    #[error(
        "its exported functions' types are too large to describe: by `{function}` their JSON Schemas would pass the {limit} bytes one plugin may declare (a WIT type used many times inside another is described once per use). Leave such functions out with `skip = true` in [plugins.{plugin}.tools.NAME] to load the others"
    )]
    TypesTooLarge {
        plugin: String,
        function: String,
        limit: usize,
    },
}
