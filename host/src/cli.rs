//! Command-line interface: clap types and dispatch to the library. Output formatting lives in
//! `render.rs`; no logic here beyond wiring.

use crate::render;
use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use cordon::cache::CompileCache;
use cordon::config::Config;
use cordon::{CallOptions, CallRequest, Registry, RegistryOptions};
use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run AI-agent tools as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "cordon", version, about)]
pub struct Cli {
    /// Directory holding the plugin components (`*.wasm`).
    #[arg(long, global = true, default_value = "plugins", value_name = "DIR")]
    pub plugins: PathBuf,
    /// The operator's grants and limits [default: ./cordon.toml when present].
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Compile every plugin afresh instead of using the on-disk compile cache.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Log more to stderr (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools and hooks of every loaded plugin, and the plugins that were refused.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one tool's description and parameters schema.
    Describe {
        tool: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool. Exit code 0 on success, 1 when the result is an error.
    Call {
        tool: String,
        /// Arguments as a JSON object, or `-` to read them from stdin [default: {}].
        args: Option<String>,
        /// Print the whole result as JSON.
        #[arg(long)]
        json: bool,
        /// The call id reported in the result.
        #[arg(long, default_value = "call-1")]
        id: String,
    },
}

impl Cli {
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        let registry = self.load_registry().await?;
        match self.command {
            Command::List { json } => {
                render::list(&registry, json)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Describe { ref tool, json } => {
                let Some((plugin, info)) = registry.tool(tool) else {
                    bail!(
                        "no tool named {tool:?}; available tools: {}",
                        registry.tool_names().join(", ")
                    );
                };
                render::describe(plugin, info, json)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Call {
                ref tool,
                ref args,
                json,
                ref id,
            } => {
                let arguments = read_arguments(args.as_deref())?;
                let request = CallRequest {
                    id: id.clone(),
                    name: tool.clone(),
                    arguments,
                };
                let result = registry.call(&request, &CallOptions::default()).await;
                render::call_result(&result, json)?;
                Ok(if result.is_error {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                })
            }
        }
    }

    async fn load_registry(&self) -> anyhow::Result<Registry> {
        let config = match &self.config {
            Some(path) => Config::load(path)?,
            None if PathBuf::from("cordon.toml").is_file() => Config::load("cordon.toml".as_ref())?,
            None => Config::default(),
        };
        let cache = if self.no_cache {
            CompileCache::disabled()
        } else {
            CompileCache::default_location()
        };
        let options = RegistryOptions {
            plugins_dir: self.plugins.clone(),
            config,
            cache,
        };
        Ok(Registry::load(options).await?)
    }
}

/// The arguments text: given, read from stdin (`-`), or `{}`.
fn read_arguments(args: Option<&str>) -> anyhow::Result<String> {
    match args {
        None => Ok("{}".to_string()),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading arguments from stdin")?;
            Ok(text)
        }
        Some(text) => Ok(text.to_string()),
    }
}
