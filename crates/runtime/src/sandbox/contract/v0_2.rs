//! Contract `cordon:plugin@0.2.0`: its generated bindings, its host functions, and its types in
//! host terms. Beside 0.1 it carries a tool's title, annotations, output schema, prompt
//! guidelines and locks, structured output, and the before-hook decision `ask`.

use super::content;
use super::host_terms::{
    BeforeDecision, Declared, DeclaredTool, ExecutionMode, GuestCall, GuestOutput, HookInfo,
    ToolAnnotations,
};
use crate::report::{Content, ErrorKind, LogLevel, ToolResult};
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../../wit/plugin-0.2.0",
    world: "cordon-plugin",
    exports: { default: async },
});

use self::cordon::plugin::{host, types};

same_in_every_version!();

/// The name of the interface a 0.2 plugin exports.
pub const EXPORT: &str = "cordon:plugin/plugin@0.2.0";

same_since_0_2!();

/// A 0.2 plugin offers tools and a hook only.
fn offered(_: &mut types::PluginInfo) -> super::offer_terms::Offered {
    Default::default()
}
