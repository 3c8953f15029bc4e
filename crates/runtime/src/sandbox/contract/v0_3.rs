//! Contract `cordon:plugin@0.3.0`: its generated bindings, its host functions, and its types in
//! host terms. Beside 0.2 it carries the session stages a hook declares and `session-hook`, called
//! at each of them.

use super::content;
use super::host_terms::{
    BeforeDecision, Declared, DeclaredTool, ExecutionMode, GuestCall, GuestOutput, HookInfo,
    SessionDecision, SessionStage, ToolAnnotations,
};
use crate::report::{Content, ErrorKind, LogLevel, ToolResult};
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../../wit/plugin-0.3.0",
    world: "cordon-plugin",
    exports: { default: async },
});

use self::cordon::plugin::{host, types};

same_in_every_version!(without_hook_info);
same_since_0_3!();
same_since_0_2!();

/// The name of the interface a 0.3 plugin exports.
pub const EXPORT: &str = "cordon:plugin/plugin@0.3.0";

/// A 0.3 plugin offers tools and a hook only.
fn offered(_: &mut types::PluginInfo) -> super::offer_terms::Offered {
    Default::default()
}
