//! Building a plugin project into a component, with the project's own toolchain: cargo for Rust
//! (`Cargo.toml`), componentize-py for Python (`app.py`), componentize-js for JavaScript
//! (`app.js` or `package.json`, see `js.rs`), Zig for C (`*.c`, see `c.rs`). Where the component
//! goes, and what it may replace there, is `output.rs`.

mod c;
mod js;
mod output;
mod output_cache;
mod rust_config;

pub use output::BuildRecords;
use output_cache::{BuildKey, OutputCache};

use crate::project::{ScaffoldError, build_venv_program, source_root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `cordon build` was asked to do besides the project.
pub struct BuildOptions<'a> {
    /// The plugins directory the component goes into.
    pub plugins: &'a Path,
    /// The plugin's name [default: the project directory's name].
    pub name: Option<&'a str>,
    /// Replace a `NAME.wasm` this project did not build.
    pub force: bool,
    /// Where builds record what they wrote (to tell a rebuild from a replacement).
    pub records: BuildRecords,
    /// cordon's cache directory: the Rust target directory every project shares (`cargo-target/`)
    /// and the components of earlier Python and JavaScript builds (`build-outputs/`); `None`:
    /// each Rust project builds in its own `target/`, and nothing is reused.
    pub cache: Option<&'a Path>,
    /// What the host does to a built component before it goes into place (the project's and the
    /// component's paths; `Err` says why the component is refused): cordon embeds the project's
    /// `skills/` there.
    pub finish: Option<&'a FinishStep>,
}

/// A step the host runs on a built component: given the project and the component.
pub type FinishStep = dyn Fn(&Path, &Path) -> Result<(), String>;

/// What a build did.
#[derive(Debug, Clone)]
pub struct Built {
    /// Where the component went (`PLUGINS/NAME.wasm`).
    pub path: PathBuf,
    /// The inputs were those of an earlier build, whose component was reused.
    pub reused: bool,
}

/// Builds the project in `project` into `plugins/NAME.wasm`: the name checked, an existing file
/// there replaced only when it is this project's own last build (or `force`), the component
/// renamed into place once whole.
pub fn build(project: &Path, options: &BuildOptions<'_>) -> Result<Built, ScaffoldError> {
    let no_project = || ScaffoldError::NoProject {
        path: project.to_path_buf(),
    };
    let project = &project.canonicalize().map_err(|_| no_project())?;
    let crate_name = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(no_project)?;
    let language_known = project.join("Cargo.toml").is_file()
        || project.join("app.py").is_file()
        || js::is_project(project)
        || c::is_project(project);
    if !language_known {
        return Err(ScaffoldError::UnknownLanguage {
            path: project.clone(),
        });
    }
    let output = output::Output::prepare(
        project,
        options.plugins,
        options.name,
        options.force,
        &options.records,
    )?;
    let scratch = output.scratch_file();
    let outputs = OutputCache::in_cache(options.cache);
    let mut reused = false;
    if project.join("Cargo.toml").is_file() {
        let shared = options.cache.map(|cache| cache.join("cargo-target"));
        build_rust(project, &crate_name, &scratch, shared.as_deref())?;
    } else if project.join("app.py").is_file() {
        reused = reuse_or_build(&outputs, python_key(project)?, &scratch, || {
            build_python(project, &scratch)
        })?;
    } else if js::is_project(project) {
        reused = reuse_or_build(&outputs, js::key(project)?, &scratch, || {
            js::build(project, &scratch)
        })?;
    } else {
        c::build(project, &scratch)?;
    }
    if let Some(finish) = options.finish {
        finish(project, &scratch).map_err(|reason| ScaffoldError::Finishing {
            project: project.clone(),
            reason,
        })?;
    }
    let path = output.finish(options.force, &options.records)?;
    Ok(Built { path, reused })
}

/// The component kept for `key` copied to `output`, or `build` run and its output kept; whether
/// it was reused.
fn reuse_or_build(
    outputs: &OutputCache,
    key: Option<String>,
    output: &Path,
    build: impl FnOnce() -> Result<(), ScaffoldError>,
) -> Result<bool, ScaffoldError> {
    if let Some(key) = &key
        && outputs.restore(key, output)
    {
        return Ok(true);
    }
    build()?;
    if let Some(key) = &key {
        outputs.keep(key, output);
    }
    Ok(false)
}

/// The digest of what a Python build reads: componentize-py (its path and version), the
/// contract, the Python SDK and the project.
fn python_key(project: &Path) -> Result<Option<String>, ScaffoldError> {
    let Some(componentize) = find_componentize_py() else {
        return Ok(None);
    };
    let root = source_root()?;
    let mut key = BuildKey::new("python");
    key.value(
        "componentize-py",
        &tool_identity(&componentize, &["--version"]),
    );
    key.value("recipe", PYTHON_RECIPE.join(" ").as_bytes());
    key.tree("contract", &root.join(crate::project::CONTRACT_DIR), &[]);
    key.tree("sdk", &root.join("sdk/python"), &[]);
    key.tree("project", project, &[]);
    Ok(key.finish())
}

/// A tool's path and what `tool ARGS` prints (its version), to key builds made with it.
pub(super) fn tool_identity(tool: &Path, args: &[&str]) -> Vec<u8> {
    let mut identity = tool.as_os_str().as_encoded_bytes().to_vec();
    identity.push(0);
    if let Ok(out) = Command::new(tool).args(args).output() {
        identity.extend_from_slice(&out.stdout);
    }
    identity
}

/// Builds the Rust project (the crate named after its directory) into the component `output`,
/// in `CARGO_TARGET_DIR`, else the target directory the project's cargo configuration names,
/// else `shared` (cordon's, which every project shares), else the project's own `target/`.
fn build_rust(
    project: &Path,
    name: &str,
    output: &Path,
    shared: Option<&Path>,
) -> Result<(), ScaffoldError> {
    require("cargo", "install Rust with rustup: https://rustup.rs")?;
    let targets = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    let has_target = targets
        .map(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|t| t == "wasm32-wasip2")
        })
        .unwrap_or(false);
    if !has_target {
        return Err(ScaffoldError::MissingTool {
            tool: "the wasm32-wasip2 Rust target".into(),
            install: "install it with: rustup target add wasm32-wasip2".into(),
        });
    }
    let mut command = Command::new("cargo");
    command
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--message-format=json-render-diagnostics",
            "--manifest-path",
        ])
        .arg(project.join("Cargo.toml"));
    if std::env::var_os("CARGO_TARGET_DIR").is_none()
        && std::env::var_os("CARGO_BUILD_TARGET_DIR").is_none()
        && !rust_config::names_target_dir(project)
        && let Some(shared) = shared
    {
        command.env("CARGO_TARGET_DIR", shared);
    }
    let artifacts = run_capturing(&mut command)?;
    // Where cargo wrote the component, as it says, whichever target directory it used.
    let krate = name.replace('-', "_");
    let built = rust_config::component_in(&artifacts, &krate).ok_or_else(|| {
        ScaffoldError::NoComponent {
            krate: krate.clone(),
            command: format!("{command:?}"),
        }
    })?;
    std::fs::copy(&built, output).map_err(ScaffoldError::io("copy", &built))?;
    Ok(())
}

/// How componentize-py is asked to build (after the contract's directory): part of the build's
/// key, so a change of it is a new build.
const PYTHON_RECIPE: [&str; 4] = ["-w", "cordon-plugin", "componentize", "app"];

fn build_python(project: &Path, output: &Path) -> Result<(), ScaffoldError> {
    let componentize = find_componentize_py().ok_or_else(|| ScaffoldError::MissingTool {
        tool: "componentize-py".into(),
        install: "install it with: python3 -m pip install componentize-py==0.25.1".into(),
    })?;
    let root = source_root()?;
    run(Command::new(componentize)
        .arg("-d")
        .arg(root.join(crate::project::CONTRACT_DIR))
        .args(PYTHON_RECIPE)
        .arg("-p")
        .arg(project)
        .arg("-p")
        .arg(root.join("sdk/python"))
        .arg("-o")
        .arg(output))
}

/// componentize-py on PATH, or in the venv `make` sets up.
fn find_componentize_py() -> Option<PathBuf> {
    if answers_version("componentize-py") {
        return Some(PathBuf::from("componentize-py"));
    }
    build_venv_program("componentize-py")
}

/// Fails with `install` (how to get it) unless `tool --version` runs and succeeds.
pub(super) fn require(tool: &str, install: &str) -> Result<(), ScaffoldError> {
    if !answers_version(tool) {
        return Err(ScaffoldError::MissingTool {
            tool: tool.into(),
            install: install.into(),
        });
    }
    Ok(())
}

fn answers_version(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs `command` with its stderr shown and its stdout returned; fails as [`run`] does.
fn run_capturing(command: &mut Command) -> Result<String, ScaffoldError> {
    let shown = format!("{command:?}");
    let out = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|source| ScaffoldError::Spawn {
            command: shown.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(ScaffoldError::BuildFailed {
            command: shown,
            status: out.status,
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(super) fn run(command: &mut Command) -> Result<(), ScaffoldError> {
    let shown = format!("{command:?}");
    let status = command.status().map_err(|source| ScaffoldError::Spawn {
        command: shown.clone(),
        source,
    })?;
    if !status.success() {
        return Err(ScaffoldError::BuildFailed {
            command: shown,
            status,
        });
    }
    Ok(())
}
