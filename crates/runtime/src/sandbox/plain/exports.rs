//! Which of a component's exports are its own functions, and whether it is a command: what a
//! toolchain adds for itself (componentize-py's `exports#init`, componentize-qjs's top-level
//! `init`) is left out, and `wasi:cli/run` (0.2 or 0.3) makes a command of a component with no
//! other function.

use super::tool_names::FunctionPath;
use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, ComponentExportIndex};

/// The WIT interface a command exports: any 0.2 or 0.3 version.
const CLI_RUN_PREFIXES: [&str; 2] = ["wasi:cli/run@0.2.", "wasi:cli/run@0.3."];

/// Whether export `name` is a command's `wasi:cli/run`.
fn is_cli_run(name: &str) -> bool {
    CLI_RUN_PREFIXES
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Exports a toolchain adds for itself, not functions of the component's world: componentize-py's
/// pre-initialisation entry point (`exports#init`, in an unnamed instance).
const TOOLCHAIN_EXPORTS: &[(&str, &str)] = &[("exports", "init")];

/// componentize-qjs's pre-initialisation entry point: a top-level `init` with exactly these
/// parameters (a world's own `init` with other parameters is a tool like any function).
const QJS_INIT_PARAMS: [&str; 4] = ["shim", "script", "entry-path", "disable-gc"];

/// Whether top-level function `name` of type `func` is one a toolchain added for itself.
fn is_toolchain_function(name: &str, func: &ComponentFunc) -> bool {
    name == "init" && func.params().map(|(param, _)| param).eq(QJS_INIT_PARAMS)
}

/// Whether the component is a `wasi:cli` command: it exports `wasi:cli/run` and no function of its
/// own besides what its toolchain adds (componentize-py's `exports#init`), so a Python command
/// built with `componentize-py -w wasi:cli/command` is one too.
pub fn is_command(engine: &Engine, component: &Component) -> bool {
    let exports_run = component
        .component_type()
        .exports(engine)
        .any(|(name, _)| is_cli_run(name));
    exports_run && exported_functions(engine, component).is_empty()
}

/// A function export and where it sits.
pub(super) struct ExportedFunction {
    pub path: FunctionPath,
    pub index: ComponentExportIndex,
    pub func: ComponentFunc,
}

/// Every function the component exports, itself or in exported interfaces (not `wasi:cli/run`),
/// in export order.
pub(super) fn exported_functions(engine: &Engine, component: &Component) -> Vec<ExportedFunction> {
    let mut functions = Vec::new();
    for (name, item) in component.component_type().exports(engine) {
        match item.ty {
            ComponentItem::ComponentFunc(func) if !is_toolchain_function(name, &func) => {
                if let Some(index) = component.get_export_index(None, name) {
                    functions.push(ExportedFunction {
                        path: FunctionPath {
                            interface: None,
                            function: name.to_string(),
                        },
                        index,
                        func,
                    });
                }
            }
            ComponentItem::ComponentInstance(instance) if !is_cli_run(name) => {
                let Some(instance_index) = component.get_export_index(None, name) else {
                    continue;
                };
                for (function, item) in instance.exports(engine) {
                    let ComponentItem::ComponentFunc(func) = item.ty else {
                        continue;
                    };
                    if TOOLCHAIN_EXPORTS.contains(&(name, function)) {
                        continue;
                    }
                    if let Some(index) = component.get_export_index(Some(&instance_index), function)
                    {
                        functions.push(ExportedFunction {
                            path: FunctionPath {
                                interface: Some(name.to_string()),
                                function: function.to_string(),
                            },
                            index,
                            func,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    functions
}
