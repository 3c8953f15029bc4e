//! The contracts the host speaks, side by side: cordon's own WIT (`wit/plugin-0.1.0` to
//! `wit/plugin-0.4.0`), plain components that export functions of a WIT world of their own, and
//! `wasi:cli` commands. Which one a component follows, its host functions in the linker, and its
//! exports called through one interface in host terms. The generated bindings stay in this folder;
//! plain components (their WIT values to and from JSON) are `sandbox/plain/`.

pub mod command;
pub(crate) mod content;
#[macro_use]
mod same_in_every_version;
#[macro_use]
mod same_since_0_2;
#[macro_use]
mod same_since_0_3;
pub mod host_terms;
mod imports;
pub mod offer_terms;
mod offers;
mod v0_1;
mod v0_2;
mod v0_3;
mod v0_4;

use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use crate::sandbox::plain::{
    self, PlainFunctions, PlainInstance, PlainPre, PlainRefusal, PlainSetup,
};
use command::{CommandPre, CommandRefusal};
use host_terms::{BeforeDecision, Declared, GuestCall, GuestOutput, SessionDecision, SessionStage};
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::{Component, InstancePre, Linker};

/// The contract a plugin follows: a version of cordon's own, or none (a plain component, a
/// command), whose tools cordon derives from the component's types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum ContractVersion {
    /// cordon's contract `cordon:plugin@0.1.0`.
    #[serde(rename = "0.1.0")]
    V0_1,
    /// cordon's contract `cordon:plugin@0.2.0`.
    #[serde(rename = "0.2.0")]
    V0_2,
    /// cordon's contract `cordon:plugin@0.3.0` (session stages).
    #[serde(rename = "0.3.0")]
    V0_3,
    /// cordon's contract `cordon:plugin@0.4.0` (resources and prompts).
    #[serde(rename = "0.4.0")]
    V0_4,
    /// Functions of the component's own WIT world.
    #[serde(rename = "plain")]
    Plain,
    /// A `wasi:cli` command.
    #[serde(rename = "command")]
    Command,
}

impl ContractVersion {
    /// `0.1.0`, `0.2.0`, `plain` or `command`, as it is serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V0_1 => "0.1.0",
            Self::V0_2 => "0.2.0",
            Self::V0_3 => "0.3.0",
            Self::V0_4 => "0.4.0",
            Self::Plain => "plain",
            Self::Command => "command",
        }
    }

    /// Whether the plugin was built against cordon's WIT (it may declare a hook, titles,
    /// guidelines, locks), rather than having its tools derived by cordon.
    pub fn is_cordon(self) -> bool {
        matches!(self, Self::V0_1 | Self::V0_2 | Self::V0_3 | Self::V0_4)
    }
}

impl std::fmt::Display for ContractVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Adds every version's host functions (`cordon:plugin/host@0.1.0` to `@0.4.0`) to the linker.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    type Data = wasmtime::component::HasSelf<CallState>;
    v0_1::CordonPlugin::add_to_linker::<_, Data>(linker, |state| state)?;
    v0_2::CordonPlugin::add_to_linker::<_, Data>(linker, |state| state)?;
    v0_3::CordonPlugin::add_to_linker::<_, Data>(linker, |state| state)?;
    v0_4::CordonPlugin::add_to_linker::<_, Data>(linker, |state| state)?;
    Ok(())
}

/// A plugin's component, linked, ready to instantiate for the contract it follows.
pub(crate) enum ContractPre {
    V0_1(v0_1::CordonPluginPre<CallState>),
    V0_2(v0_2::CordonPluginPre<CallState>),
    V0_3(v0_3::CordonPluginPre<CallState>),
    V0_4(v0_4::CordonPluginPre<CallState>),
    Plain(PlainPre),
    Command(CommandPre),
}

/// Why a component cannot be a plugin under any contract the host speaks.
#[derive(Debug, thiserror::Error)]
pub enum WrongWorld {
    /// The component exports cordon's world but does not fit it.
    #[error("it does not fit the cordon:plugin@{version} `cordon-plugin` world: {message}")]
    Mismatch {
        /// The version whose world it exports.
        version: ContractVersion,
        /// What does not fit, as the linker says it.
        message: String,
    },
    /// A plain component's exports cannot be offered as tools.
    #[error("{0}")]
    Plain(#[from] PlainRefusal),
    /// A `wasi:cli` command that cannot be offered as a tool.
    #[error("it is a wasi:cli command, but {0}")]
    Command(#[from] CommandRefusal),
    /// Imports no host function satisfies, all of them listed.
    #[error(
        "it imports what this host does not provide: {}. cordon provides WASI 0.2 (cli, clocks, filesystem, io, random; sockets are linked but always denied), WASI 0.3 cli, clocks and random (not yet 0.3 filesystem, sockets or http), wasi:http 0.2 (outgoing, through the plugin's HTTP grants), wasi:config/store (the plugin's settings) and cordon:plugin/host",
        .0.join(", ")
    )]
    MissingImports(Vec<String>),
    /// A plain component's or a command's imports exist here but with other types.
    #[error("its imports do not match what this host provides: {0}")]
    ImportMismatch(String),
}

/// Which contract a component follows, from its exports alone.
pub(crate) fn contract_of(engine: &wasmtime::Engine, component: &Component) -> ContractVersion {
    let exports: Vec<String> = component
        .component_type()
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    if exports.iter().any(|name| name == v0_4::EXPORT) {
        ContractVersion::V0_4
    } else if exports.iter().any(|name| name == v0_3::EXPORT) {
        ContractVersion::V0_3
    } else if exports.iter().any(|name| name == v0_2::EXPORT) {
        ContractVersion::V0_2
    } else if exports.iter().any(|name| name == v0_1::EXPORT) {
        ContractVersion::V0_1
    } else if plain::is_command(engine, component) {
        ContractVersion::Command
    } else {
        ContractVersion::Plain
    }
}

impl ContractPre {
    /// Links `component` for the contract it follows (for cordon's own, the newest version it exports).
    pub fn new(
        linker: &Linker<CallState>,
        component: &Component,
        setup: &PlainSetup<'_>,
    ) -> Result<(Self, ContractVersion), WrongWorld> {
        let engine = linker.engine();
        let version = contract_of(engine, component);
        // A plain component's exports are read first: one that offers nothing says so before
        // its imports are looked at.
        let functions = match version {
            ContractVersion::Plain => {
                Some(Arc::new(PlainFunctions::read(engine, component, setup)?))
            }
            _ => None,
        };
        if version.is_cordon() && !setup.overrides.is_empty() {
            return Err(WrongWorld::Mismatch {
                version,
                message: format!(
                    "[plugins.{}.tools] is for components not built for cordon; this plugin declares its own tools, so remove that table",
                    setup.plugin
                ),
            });
        }
        let instance_pre: InstancePre<CallState> =
            linker.instantiate_pre(component).map_err(|err| {
                let missing = imports::not_provided(engine, component);
                if !missing.is_empty() {
                    return WrongWorld::MissingImports(missing);
                }
                match version {
                    ContractVersion::V0_1
                    | ContractVersion::V0_2
                    | ContractVersion::V0_3
                    | ContractVersion::V0_4 => WrongWorld::Mismatch {
                        version,
                        message: format!("{err:#}"),
                    },
                    _ => WrongWorld::ImportMismatch(format!("{err:#}")),
                }
            })?;
        let mismatch = |err: wasmtime::Error| WrongWorld::Mismatch {
            version,
            message: format!("{err:#}"),
        };
        let pre = match version {
            ContractVersion::V0_1 => {
                Self::V0_1(v0_1::CordonPluginPre::new(instance_pre).map_err(mismatch)?)
            }
            ContractVersion::V0_2 => {
                Self::V0_2(v0_2::CordonPluginPre::new(instance_pre).map_err(mismatch)?)
            }
            ContractVersion::V0_3 => {
                Self::V0_3(v0_3::CordonPluginPre::new(instance_pre).map_err(mismatch)?)
            }
            ContractVersion::V0_4 => {
                Self::V0_4(v0_4::CordonPluginPre::new(instance_pre).map_err(mismatch)?)
            }
            ContractVersion::Plain => Self::Plain(PlainPre {
                instance_pre,
                functions: functions.expect("read above for a plain component"),
            }),
            ContractVersion::Command => {
                Self::Command(CommandPre::new(engine, component, instance_pre, setup)?)
            }
        };
        Ok((pre, version))
    }

    /// What a plain component or a command declares, known without running it; `None` for a
    /// cordon plugin, which says it in `describe`.
    pub fn derived_declarations(&self) -> Option<Declared> {
        match self {
            Self::V0_1(_) | Self::V0_2(_) | Self::V0_3(_) | Self::V0_4(_) => None,
            Self::Plain(pre) => Some(pre.functions.declared()),
            Self::Command(pre) => Some(pre.declared()),
        }
    }

    /// The command, when this is one.
    pub fn command(&self) -> Option<&CommandPre> {
        match self {
            Self::Command(pre) => Some(pre),
            _ => None,
        }
    }

    pub async fn instantiate(&self, store: &mut Store<CallState>) -> wasmtime::Result<Instance> {
        Ok(match self {
            Self::V0_1(pre) => Instance::V0_1(pre.instantiate_async(store).await?),
            Self::V0_2(pre) => Instance::V0_2(pre.instantiate_async(store).await?),
            Self::V0_3(pre) => Instance::V0_3(pre.instantiate_async(store).await?),
            Self::V0_4(pre) => Instance::V0_4(pre.instantiate_async(store).await?),
            Self::Plain(pre) => Instance::Plain(PlainInstance {
                instance: pre.instance_pre.instantiate_async(store).await?,
                functions: pre.functions.clone(),
            }),
            Self::Command(pre) => Instance::Command {
                instance: pre.instance_pre.instantiate_async(store).await?,
                terms: pre.terms().clone(),
            },
        })
    }
}

/// One instantiated plugin, in a store of its own.
pub(crate) enum Instance {
    V0_1(v0_1::CordonPlugin),
    V0_2(v0_2::CordonPlugin),
    V0_3(v0_3::CordonPlugin),
    V0_4(v0_4::CordonPlugin),
    Plain(PlainInstance),
    Command {
        instance: wasmtime::component::Instance,
        terms: command::RunTerms,
    },
}

impl Instance {
    /// `describe` of a cordon plugin; a plain component or a command declares nothing itself (its
    /// declarations are derived at load, see [`ContractPre::derived_declarations`]).
    pub async fn describe(&self, store: &mut Store<CallState>) -> wasmtime::Result<Declared> {
        match self {
            Self::V0_1(plugin) => v0_1::describe(plugin, store).await,
            Self::V0_2(plugin) => v0_2::describe(plugin, store).await,
            Self::V0_3(plugin) => v0_3::describe(plugin, store).await,
            Self::V0_4(plugin) => v0_4::describe(plugin, store).await,
            Self::Plain(_) | Self::Command { .. } => Ok(Declared {
                tools: Vec::new(),
                hook: None,
                offered: Default::default(),
            }),
        }
    }

    /// The tool's output, or the failure it reported.
    pub async fn execute(
        &self,
        store: &mut Store<CallState>,
        call: &GuestCall,
    ) -> wasmtime::Result<Result<GuestOutput, Failure>> {
        let outcome = match self {
            Self::V0_1(plugin) => v0_1::execute(plugin, store, call).await,
            Self::V0_2(plugin) => v0_2::execute(plugin, store, call).await,
            Self::V0_3(plugin) => v0_3::execute(plugin, store, call).await,
            Self::V0_4(plugin) => v0_4::execute(plugin, store, call).await,
            // These say what the host refused in their own words.
            Self::Plain(plugin) => return plugin.execute(store, call).await,
            Self::Command { instance, terms } => {
                return command::run(instance, terms, store).await;
            }
        };
        let state = store.data();
        Ok(outcome?.map_err(|failure| with_refusal_named(state, failure)))
    }

    pub async fn before_tool_call(
        &self,
        store: &mut Store<CallState>,
        call: &GuestCall,
    ) -> wasmtime::Result<BeforeDecision> {
        match self {
            Self::V0_1(plugin) => v0_1::before_tool_call(plugin, store, call).await,
            Self::V0_2(plugin) => v0_2::before_tool_call(plugin, store, call).await,
            Self::V0_3(plugin) => v0_3::before_tool_call(plugin, store, call).await,
            Self::V0_4(plugin) => v0_4::before_tool_call(plugin, store, call).await,
            // Never asked: a plugin that declares no hook is never given other tools' calls.
            Self::Plain(_) | Self::Command { .. } => Ok(BeforeDecision::Allow),
        }
    }

    /// The hook's replacement of `result`, if it replaced it.
    pub async fn after_tool_call(
        &self,
        store: &mut Store<CallState>,
        call: &GuestCall,
        result: &ToolResult,
    ) -> wasmtime::Result<Option<GuestOutput>> {
        match self {
            Self::V0_1(plugin) => v0_1::after_tool_call(plugin, store, call, result).await,
            Self::V0_2(plugin) => v0_2::after_tool_call(plugin, store, call, result).await,
            Self::V0_3(plugin) => v0_3::after_tool_call(plugin, store, call, result).await,
            Self::V0_4(plugin) => v0_4::after_tool_call(plugin, store, call, result).await,
            Self::Plain(_) | Self::Command { .. } => Ok(None),
        }
    }

    /// The session hook's decision at `stage`; `None` from a contract without session stages
    /// (never asked: such a plugin declares none).
    pub async fn session_hook(
        &self,
        store: &mut Store<CallState>,
        stage: SessionStage,
        payload: &str,
    ) -> wasmtime::Result<Option<SessionDecision>> {
        match self {
            Self::V0_3(plugin) => v0_3::session_hook(plugin, store, stage, payload)
                .await
                .map(Some),
            Self::V0_4(plugin) => v0_4::session_hook(plugin, store, stage, payload)
                .await
                .map(Some),
            _ => Ok(None),
        }
    }
}

/// A failure reported after the host refused the plugin something (a file outside its grants) is
/// for want of a grant, whatever its SDK or author called the error: `capability_denied`, saying
/// what was refused.
fn with_refusal_named(state: &CallState, failure: Failure) -> Failure {
    let refusal = match failure.kind {
        ErrorKind::ToolError => state.refusal_behind(&failure.message),
        _ => None,
    };
    let Some(refusal) = refusal else {
        return failure;
    };
    let mut details = failure.details;
    if let Some(object) = details.as_object_mut() {
        object.insert("refused".into(), refusal.clone().into());
    }
    Failure::new(
        ErrorKind::CapabilityDenied,
        format!(
            "{}\nThe host refused it {refusal}; that is outside what this plugin was granted.",
            failure.message
        ),
        details,
    )
}
