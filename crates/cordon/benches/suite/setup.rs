//! Where the benchmarks find their guest components and how they load them: a plugins directory
//! per runtime in a scratch folder, the user's compile cache.

use anyhow::Context as _;
use cordon_runtime::CompileCache;
use cordon_runtime::config::Config;
use cordon_runtime::{Pipeline, RuntimeBuilder};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Environment variables naming optional components built elsewhere (the C and JavaScript SDKs):
/// each must export a tool `echo` taking `{"text": string}`. When unset, the file named beside it
/// in `CORDON_GUEST_DIR` is used if it exists (`make fixtures` builds both from
/// tests/fixtures_c/echo_c and tests/fixtures_js/echo_js).
pub const OPTIONAL_ECHOES: [(&str, &str, &str); 2] = [
    ("C", "CORDON_BENCH_ECHO_C", "fixture_echo_c.wasm"),
    ("JavaScript", "CORDON_BENCH_ECHO_JS", "fixture_echo_js.wasm"),
];

/// The run's scratch folder, guest components and compile cache.
pub struct Setup {
    pub guests: PathBuf,
    pub scratch: tempfile::TempDir,
    pub cordon_bin: PathBuf,
    pub mcp_echo_bin: PathBuf,
    /// The release build of `cordon` (what `make install` installs), for section 11.
    pub release_bin: Option<PathBuf>,
}

impl Setup {
    pub fn from_env() -> anyhow::Result<Self> {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .with_context(|| format!("{name} is not set: run the benchmarks with `make bench`"))
        };
        Ok(Self {
            guests: var("CORDON_GUEST_DIR")?,
            scratch: tempfile::tempdir()?,
            cordon_bin: var("CORDON_BIN")?,
            mcp_echo_bin: var("CORDON_MCP_ECHO_BIN")?,
            release_bin: std::env::var_os("CORDON_RELEASE_BIN").map(PathBuf::from),
        })
    }

    /// A component built by `make fixtures`.
    pub fn guest(&self, file: &str) -> PathBuf {
        self.guests.join(file)
    }

    /// An optional component (see [`OPTIONAL_ECHOES`]), if it has been built.
    pub fn optional_echo(&self, variable: &str, file: &str) -> Option<PathBuf> {
        let path = std::env::var_os(variable)
            .map(PathBuf::from)
            .unwrap_or_else(|| self.guests.join(file));
        path.is_file().then_some(path)
    }

    /// The compile cache every registry of the run shares: the user's own (`$XDG_CACHE_HOME`, or
    /// `~/.cache`), so the Python components compile once per machine, not once per run.
    pub fn cache(&self) -> CompileCache {
        CompileCache::default_location()
    }

    /// Runs `bin --plugins PLUGINS ARGS…` as a whole process in the scratch folder, with its
    /// compile cache under `cache`; returns how long it took and what it printed on stdout.
    pub fn timed_cordon(
        &self,
        bin: &Path,
        plugins: &Path,
        cache: &Path,
        args: &[&str],
    ) -> anyhow::Result<(Duration, Output)> {
        let started = Instant::now();
        let output = Command::new(bin)
            .arg("--plugins")
            .arg(plugins)
            .args(args)
            .current_dir(self.scratch.path())
            .env("XDG_CACHE_HOME", cache)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()?;
        Ok((started.elapsed(), output))
    }

    /// A fresh plugins directory named `name` holding `plugins` (plugin id, component file).
    pub fn plugins_dir(&self, name: &str, plugins: &[(&str, &Path)]) -> anyhow::Result<PathBuf> {
        let dir = self.scratch.path().join(name);
        std::fs::create_dir_all(&dir)?;
        for (id, file) in plugins {
            std::fs::copy(file, dir.join(format!("{id}.wasm")))
                .with_context(|| format!("copying {}", file.display()))?;
        }
        Ok(dir)
    }

    /// A runtime over `plugins` with the configuration `config` (cordon.toml text), assembled as
    /// the `cordon` binary assembles its own.
    pub async fn pipeline(
        &self,
        name: &str,
        plugins: &[(&str, &Path)],
        config: &str,
    ) -> anyhow::Result<Pipeline> {
        let dir = self.plugins_dir(name, plugins)?;
        let origin = self.scratch.path().join(format!("{name}.toml"));
        let config = Config::parse(config, &origin, self.scratch.path())?;
        let pipeline = RuntimeBuilder::new(dir)
            .config(config)
            .cache(self.cache())
            .build()
            .await?;
        if let Some(rejected) = pipeline.registry().rejected().first() {
            anyhow::bail!(
                "{} was refused: {}",
                rejected.file.display(),
                rejected.reason
            );
        }
        Ok(pipeline)
    }
}
