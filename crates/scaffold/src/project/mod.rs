//! What every plugin project shares, whichever its language: the languages and plugin names
//! cordon knows, where this cordon's SDKs and contract live, where `make` installed the build
//! tools, and the errors of `cordon new` and `cordon build`.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// Why `cordon new` or `cordon build` could not do its job; each says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error(
        "{name:?} is not a plugin name: use lowercase letters, digits and _, starting with a letter (e.g. word_count)"
    )]
    InvalidName { name: String },
    #[error("{} already exists; choose another name or remove it", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("{} does not exist or has no name", path.display())]
    NoProject { path: PathBuf },
    /// `cordon build` names the plugin after the project's directory, whose name is not one.
    #[error(
        "the project directory {} is named {name:?}, which is not a plugin name (lowercase letters, digits and _, starting with a letter); name the plugin with --name NAME",
        project.display()
    )]
    ProjectDirNotAName { name: String, project: PathBuf },
    /// `cordon build` would write over a plugin this project did not build.
    #[error(
        "{} already exists and is not the last build of {}: it may be another plugin (installed with `cordon add`, copied there, or built from another project), and a plugin built under its name would get the grants cordon.toml gives that name; pass --force to replace it, or --name NAME to build this project under another name",
        output.display(),
        project.display()
    )]
    WouldReplace { output: PathBuf, project: PathBuf },
    #[error(
        "{} has no Cargo.toml (Rust), app.py (Python), app.js or package.json (JavaScript), or .c files (C); create a project with `cordon new NAME --lang rust|python|js|c`",
        path.display()
    )]
    UnknownLanguage { path: PathBuf },
    /// The SDKs and contract `cordon new` and `cordon build` use are not where cordon looked.
    #[error(
        "{whence} {}, which does not hold cordon's contract and SDKs (wit/plugin-0.3.0, sdk/); set CORDON_SOURCE_ROOT to a cordon checkout",
        root.display()
    )]
    NoSources { root: PathBuf, whence: &'static str },
    /// A tool the build needs is missing; `install` says how to get it.
    #[error("{tool} is not installed; {install}")]
    MissingTool { tool: String, install: String },
    #[error("cannot run {command}: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the build failed ({status}): {command}")]
    BuildFailed { command: String, status: ExitStatus },
    /// cargo succeeded but wrote no component for the project's crate.
    #[error(
        "cargo built no wasm32-wasip2 component for the crate {krate} (its [lib] needs crate-type = [\"cdylib\"], as `cordon new` writes it): {command}"
    )]
    NoComponent { krate: String, command: String },
    /// The step the host runs on a built component (embedding the project's skills) refused it.
    #[error("{} was built, but {reason}", project.display())]
    Finishing { project: PathBuf, reason: String },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Generating the C bindings or making the component failed, at `step`.
    #[error("{step}: {source}")]
    Component {
        step: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ScaffoldError {
    /// An I/O error while doing `action` ("read", "write", "create", ...) on `path`.
    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }

    /// A failure of the component tooling at `step`.
    pub(crate) fn component(step: &'static str) -> impl FnOnce(anyhow::Error) -> Self {
        move |source| Self::Component {
            step,
            source: source.into(),
        }
    }
}

/// Languages `cordon new` and `cordon build` know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    Python,
    Js,
    C,
}

impl Language {
    /// Every language, in the order help texts list them.
    pub const ALL: [Language; 4] = [Self::Rust, Self::Python, Self::Js, Self::C];

    /// The name `cordon new --lang` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::Python => "python",
            Self::Js => "js",
            Self::C => "c",
        }
    }

    /// The language named `name` (as [`Language::as_str`] spells it).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|language| language.as_str() == name)
    }
}

/// What a new project starts as: `cordon new --template` (or `--hook`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Template {
    /// A tool (a word counter).
    #[default]
    Tool,
    /// A tool hook (a call naming a secrets file refused; a long result cut).
    Hook(HookPoints),
    /// A session hook (small talk routed to no tools; an unfinished answer sent back).
    SessionHook,
    /// A tool and an Agent Skill beside it (`skills/`, embedded by `cordon build`) saying when
    /// and how to use it.
    Skill,
}

/// Where a tool hook runs: before a call, after it, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookPoints {
    /// It decides about calls before they run.
    pub before: bool,
    /// It decides about results before the model sees them.
    pub after: bool,
}

impl Template {
    /// Every template, in the order help texts list them.
    pub const ALL: [Template; 6] = [
        Self::Tool,
        Self::Hook(HookPoints {
            before: true,
            after: true,
        }),
        Self::Hook(HookPoints {
            before: true,
            after: false,
        }),
        Self::Hook(HookPoints {
            before: false,
            after: true,
        }),
        Self::SessionHook,
        Self::Skill,
    ];

    /// The name `cordon new --template` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Hook(HookPoints {
                before: true,
                after: false,
            }) => "before-hook",
            Self::Hook(HookPoints {
                before: false,
                after: true,
            }) => "after-hook",
            Self::Hook(_) => "hook",
            Self::SessionHook => "session-hook",
            Self::Skill => "skill",
        }
    }

    /// The template named `name` (as [`Template::as_str`] spells it).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// The contract the SDKs target, under the source root: what `cordon build` compiles against.
pub(crate) const CONTRACT_DIR: &str = "wit/plugin-0.3.0";

/// Where this cordon's own sources are (the SDKs and the WIT contract the templates build
/// against): `CORDON_SOURCE_ROOT` when set, else the checkout cordon was built from. Checked to
/// hold both, so a checkout that moved or was deleted is named instead of failing deep in a build.
pub(crate) fn source_root() -> Result<PathBuf, ScaffoldError> {
    let (root, from_env) = match std::env::var_os("CORDON_SOURCE_ROOT") {
        Some(root) if !root.is_empty() => (PathBuf::from(root), true),
        _ => (Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."), false),
    };
    // Absolute and without `..`: templates write it into manifests read from another directory.
    let root = root
        .canonicalize()
        .unwrap_or_else(|_| std::path::absolute(&root).unwrap_or(root));
    if root.join(CONTRACT_DIR).is_dir() && root.join("sdk").is_dir() {
        return Ok(root);
    }
    Err(ScaffoldError::NoSources {
        root,
        whence: match from_env {
            true => "CORDON_SOURCE_ROOT names",
            false => "cordon was built from the checkout at",
        },
    })
}

/// A program in the venv `make` installs the build tools into (`~/.cache/cordon-build-venv`), if
/// it is there.
pub(crate) fn build_venv_program(program: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let path = PathBuf::from(home)
        .join(".cache/cordon-build-venv/bin")
        .join(program);
    path.is_file().then_some(path)
}

/// A plugin name: lowercase letters, digits and `_`, starting with a letter.
pub fn is_valid_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
