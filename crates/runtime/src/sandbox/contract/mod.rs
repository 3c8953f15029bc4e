//! The plugin contract versions the host speaks (`wit/plugin-0.1.0`, `wit/plugin-0.2.0`), side by
//! side: which one a component targets, its host functions in the linker, and its exports called
//! through one interface in host terms. The generated bindings stay in this folder.

pub(crate) mod content;
#[macro_use]
mod same_in_every_version;
pub mod host_terms;
mod v0_1;
mod v0_2;

use crate::report::ToolResult;
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use host_terms::{BeforeDecision, Declared, GuestCall, GuestOutput};
use wasmtime::Store;
use wasmtime::component::{Component, InstancePre, Linker};

/// The contract version a plugin targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum ContractVersion {
    #[serde(rename = "0.1.0")]
    V0_1,
    #[serde(rename = "0.2.0")]
    V0_2,
}

impl ContractVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V0_1 => "0.1.0",
            Self::V0_2 => "0.2.0",
        }
    }
}

impl std::fmt::Display for ContractVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Adds every version's host functions (`cordon:plugin/host@0.1.0` and `@0.2.0`) to the linker.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    type Data = wasmtime::component::HasSelf<CallState>;
    v0_1::CordonPlugin::add_to_linker::<_, Data>(linker, |state| state)?;
    v0_2::CordonPlugin::add_to_linker::<_, Data>(linker, |state| state)?;
    Ok(())
}

/// A plugin's component, linked, ready to instantiate for one version of the contract.
pub(crate) enum ContractPre {
    V0_1(v0_1::CordonPluginPre<CallState>),
    V0_2(v0_2::CordonPluginPre<CallState>),
}

/// Why a component is not a cordon plugin of any version the host speaks.
#[derive(Debug, thiserror::Error)]
pub enum WrongWorld {
    #[error(
        "it exports neither {} nor {} (it exports: {exports}); build it against wit/plugin-0.2.0 (or 0.1.0), world `cordon-plugin`",
        v0_2::EXPORT,
        v0_1::EXPORT
    )]
    NoContractExport { exports: String },
    #[error("it does not fit the cordon:plugin@{version} `cordon-plugin` world: {message}")]
    Mismatch {
        version: ContractVersion,
        message: String,
    },
}

impl ContractPre {
    /// Links `component` for the contract version it exports (0.2 when it exports both).
    pub fn new(
        linker: &Linker<CallState>,
        component: &Component,
    ) -> Result<(Self, ContractVersion), WrongWorld> {
        let engine = linker.engine();
        let exports: Vec<String> = component
            .component_type()
            .exports(engine)
            .map(|(name, _)| name.to_string())
            .collect();
        let version = if exports.iter().any(|name| name == v0_2::EXPORT) {
            ContractVersion::V0_2
        } else if exports.iter().any(|name| name == v0_1::EXPORT) {
            ContractVersion::V0_1
        } else {
            let mut listed = exports.join(", ");
            if listed.is_empty() {
                listed = "nothing".into();
            }
            return Err(WrongWorld::NoContractExport { exports: listed });
        };
        let mismatch = |err: wasmtime::Error| WrongWorld::Mismatch {
            version,
            message: format!("{err:#}"),
        };
        let instance_pre: InstancePre<CallState> =
            linker.instantiate_pre(component).map_err(mismatch)?;
        let pre = match version {
            ContractVersion::V0_1 => {
                Self::V0_1(v0_1::CordonPluginPre::new(instance_pre).map_err(mismatch)?)
            }
            ContractVersion::V0_2 => {
                Self::V0_2(v0_2::CordonPluginPre::new(instance_pre).map_err(mismatch)?)
            }
        };
        Ok((pre, version))
    }

    pub async fn instantiate(&self, store: &mut Store<CallState>) -> wasmtime::Result<Instance> {
        Ok(match self {
            Self::V0_1(pre) => Instance::V0_1(pre.instantiate_async(store).await?),
            Self::V0_2(pre) => Instance::V0_2(pre.instantiate_async(store).await?),
        })
    }
}

/// One instantiated plugin, in a store of its own.
pub(crate) enum Instance {
    V0_1(v0_1::CordonPlugin),
    V0_2(v0_2::CordonPlugin),
}

impl Instance {
    pub async fn describe(&self, store: &mut Store<CallState>) -> wasmtime::Result<Declared> {
        match self {
            Self::V0_1(plugin) => v0_1::describe(plugin, store).await,
            Self::V0_2(plugin) => v0_2::describe(plugin, store).await,
        }
    }

    /// The tool's output, or the failure it reported.
    pub async fn execute(
        &self,
        store: &mut Store<CallState>,
        call: &GuestCall,
    ) -> wasmtime::Result<Result<GuestOutput, Failure>> {
        match self {
            Self::V0_1(plugin) => v0_1::execute(plugin, store, call).await,
            Self::V0_2(plugin) => v0_2::execute(plugin, store, call).await,
        }
    }

    pub async fn before_tool_call(
        &self,
        store: &mut Store<CallState>,
        call: &GuestCall,
    ) -> wasmtime::Result<BeforeDecision> {
        match self {
            Self::V0_1(plugin) => v0_1::before_tool_call(plugin, store, call).await,
            Self::V0_2(plugin) => v0_2::before_tool_call(plugin, store, call).await,
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
        }
    }
}
