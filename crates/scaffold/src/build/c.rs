//! C plugin projects: the bindings are generated from the contract with `wit-bindgen-c`, the
//! project's `*.c` files and the C SDK (`sdk/c`) are compiled to a WASI reactor module with Zig's
//! clang (`zig cc`, from PyPI's `ziglang`) with the component-type object the generator writes, and
//! the module becomes a component in-process with `wit-component` and the WASI preview1 adapter of
//! this wasmtime major. Only Zig is needed.

use super::run;
use crate::project::{ScaffoldError, build_venv_program, source_root};
use std::path::{Path, PathBuf};
use std::process::Command;
use wit_component::ComponentEncoder;
use wit_parser::Resolve;

/// The pinned Zig release, and how to install it when it is missing.
pub const ZIG_INSTALL: &str = "python3 -m pip install ziglang==0.17.0";

/// Whether `project` is a C project: it has a `*.c` file at its top level.
pub fn is_project(project: &Path) -> bool {
    sources(project).is_ok_and(|files| !files.is_empty())
}

fn sources(project: &Path) -> Result<Vec<PathBuf>, ScaffoldError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(project)
        .map_err(ScaffoldError::io("read", project))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "c"))
        // A project's native tests (test_*.c) are not part of the plugin.
        .filter(|path| {
            !path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("test_"))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The C SDK's own sources (`sdk/c/*.c`), compiled into every C plugin.
fn sdk_sources(sdk: &Path) -> Result<Vec<PathBuf>, ScaffoldError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(sdk)
        .map_err(ScaffoldError::io("read the C SDK at", sdk))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "c"))
        .collect();
    files.sort();
    Ok(files)
}

/// Builds the C project in `project` into the component `output`.
pub fn build(project: &Path, output: &Path) -> Result<(), ScaffoldError> {
    let zig = find_zig().ok_or_else(|| ScaffoldError::MissingTool {
        tool: "Zig (the C compiler cordon builds C plugins with)".into(),
        install: format!("install it with: {ZIG_INSTALL}"),
    })?;
    let root = source_root()?;
    let (resolve, world) = contract(&root)?;
    let work = tempfile::tempdir().map_err(ScaffoldError::io("create", &std::env::temp_dir()))?;
    let bindings = work.path().join("bindings");
    write_bindings(&resolve, world, &bindings)?;
    let core = work.path().join("core.wasm");
    let mut compile = zig.command();
    compile
        .args([
            "cc",
            "-target",
            "wasm32-wasi",
            "-mexec-model=reactor",
            "-Os",
        ])
        .args(["-Wall", "-Wno-unused-function"])
        .arg("-I")
        .arg(root.join("sdk/c"))
        .arg("-I")
        .arg(&bindings)
        .arg("-I")
        .arg(project)
        .args(sources(project)?)
        .args(sdk_sources(&root.join("sdk/c"))?)
        .arg(bindings.join("cordon_plugin.c"))
        .arg(bindings.join("cordon_plugin_component_type.o"))
        .arg("-o")
        .arg(&core);
    run(&mut compile)?;
    let module = std::fs::read(&core).map_err(ScaffoldError::io("read", &core))?;
    let component = componentize(&module)?;
    std::fs::write(output, component).map_err(ScaffoldError::io("write", output))
}

/// The `cordon-plugin` world of the contract this cordon was built with.
fn contract(root: &Path) -> Result<(Resolve, wit_parser::WorldId), ScaffoldError> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_dir(root.join(crate::project::CONTRACT_DIR))
        .map_err(ScaffoldError::component(
            "reading the plugin contract (wit/plugin-0.3.0)",
        ))?;
    let world = resolve
        .select_world(&[package], Some("cordon-plugin"))
        .map_err(ScaffoldError::component("finding the cordon-plugin world"))?;
    Ok((resolve, world))
}

/// Writes `cordon_plugin.h`, `cordon_plugin.c` and `cordon_plugin_component_type.o` (the world's
/// type, linked into the module as a custom section) into `dir`.
fn write_bindings(
    resolve: &Resolve,
    world: wit_parser::WorldId,
    dir: &Path,
) -> Result<(), ScaffoldError> {
    let mut resolve = resolve.clone();
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, world, &mut files)
        .map_err(ScaffoldError::component("generating the C bindings"))?;
    std::fs::create_dir_all(dir).map_err(ScaffoldError::io("create", dir))?;
    for (name, contents) in files.iter() {
        let path = dir.join(name);
        std::fs::write(&path, contents).map_err(ScaffoldError::io("write", &path))?;
    }
    Ok(())
}

/// Wraps a core module carrying its component type into a component.
fn componentize(module: &[u8]) -> Result<Vec<u8>, ScaffoldError> {
    ComponentEncoder::default()
        .module(module)
        .map_err(ScaffoldError::component("reading the compiled module"))?
        .validate(true)
        .adapter(
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .map_err(ScaffoldError::component("adding the WASI preview1 adapter"))?
        .encode()
        .map_err(ScaffoldError::component("making the component"))
}

/// A way to run Zig: `zig` on PATH, or `python3 -m ziglang` (PyPI's `ziglang`), or the build venv.
enum Zig {
    Binary,
    Python(PathBuf),
}

impl Zig {
    fn command(&self) -> Command {
        match self {
            Zig::Binary => Command::new("zig"),
            Zig::Python(python) => {
                let mut command = Command::new(python);
                command.args(["-m", "ziglang"]);
                command
            }
        }
    }

    fn works(&self) -> bool {
        self.command()
            .arg("version")
            .output()
            .is_ok_and(|out| out.status.success())
    }
}

fn find_zig() -> Option<Zig> {
    let mut candidates = vec![Zig::Binary, Zig::Python(PathBuf::from("python3"))];
    candidates.extend(build_venv_program("python").map(Zig::Python));
    candidates.into_iter().find(Zig::works)
}
