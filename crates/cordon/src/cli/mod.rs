//! Command-line interface: clap types and dispatch to the library. Output formatting lives in
//! `render.rs`; no logic here beyond wiring.

mod agent;
mod approval_prompt;
mod config_file;
mod install;
mod interrupt;
mod live_reload;
mod live_view;
mod plugin_test;
pub mod render;
pub mod stdio_output;
pub mod telemetry_setup;
mod uninstall;
mod wassette_import;

use crate::cli::interrupt::interrupt_watcher;
use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use cordon_runtime::CompileCache;
use cordon_runtime::capabilities::lock::Lockfile;
use cordon_runtime::config::Config;
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Event, Pipeline, parse_batch};
use cordon_runtime::report::terminal_text::one_line;
use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

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
    /// Load only the plugins approved in the lockfile (also `[host] locked = true`).
    #[arg(long, global = true)]
    pub locked: bool,
    /// The lockfile [default: cordon.lock beside the config file, or in the current directory].
    #[arg(long, global = true, value_name = "FILE")]
    pub lock_file: Option<PathBuf>,
    /// Compile every plugin afresh instead of using the on-disk compile cache.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// The active tool set, comma-separated [default: `[agent] tools`, or every tool].
    #[arg(long, global = true, value_name = "A,B,C", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,
    /// Approve every call that needs a person's approval (a hook asked, or `[approval]` names
    /// it) without asking [default: ask on a terminal; elsewhere `[approval] unattended`].
    #[arg(long, global = true)]
    pub yes: bool,
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
    /// Approve the plugins as they are now: write their sha256 and grants to the lockfile.
    Lock,
    /// Install a plugin from an OCI registry (oci://HOST/REPOSITORY:TAG or @sha256:DIGEST), an
    /// HTTPS URL (with --sha256) or a local file: verified, pinned by sha256 in cordon.toml with
    /// no grants, its source recorded in cordon.lock. With --locked and no REF: `cordon sync`.
    Add {
        /// Where the plugin comes from.
        reference: Option<String>,
        /// The plugin's name [default: the repository's or file's last part].
        #[arg(long)]
        name: Option<String>,
        /// The component's sha256 (required for a URL; checked for any source).
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
        /// Replace a different plugin already installed under that name.
        #[arg(long)]
        force: bool,
        /// A Wassette permission policy whose grants to propose (default: NAME.policy.yaml or
        /// policy.yaml beside a local file); applied with --yes or when you say yes.
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
    },
    /// Install exactly the plugins cordon.lock records (their sources and sha256), e.g. in CI or
    /// a container's start.
    Sync,
    /// Uninstall a plugin: delete plugins/NAME.wasm, its [plugins.NAME] table (grants listed) and
    /// its source in cordon.lock (its approval stays until `cordon lock`).
    Remove {
        /// The plugin's name (its file name without .wasm).
        name: String,
    },
    /// Publish a plugin to an OCI registry in the Wasm component artifact layout.
    Push {
        /// A plugin id in the plugins directory, or a path to a .wasm file.
        plugin: String,
        /// oci://HOST/REPOSITORY:TAG
        reference: String,
    },
    /// Check plugins against the contract, as the host would load them: names and schemas
    /// (strict-mode form included), each tool called with its schema's `examples`, the hook run
    /// over a sample call. Exit 1 when one fails. [default: every plugin in --plugins]
    Test {
        /// The plugin files (.wasm).
        files: Vec<PathBuf>,
        /// Print the reports as JSON.
        #[arg(long)]
        json: bool,
        /// Fail on warnings too (no examples, a schema strict clients cannot use, …).
        #[arg(long)]
        deny_warnings: bool,
        /// How long one plugin's examples may take in all; the rest fail as not called.
        #[arg(long, value_name = "DURATION", default_value = "5m",
              value_parser = cordon_runtime::config::parse_duration)]
        time_budget: std::time::Duration,
    },
    /// Start a plugin project in the plugins directory from a working template.
    New {
        /// The plugin's name (lowercase letters, digits and _).
        name: String,
        /// The language of the project.
        #[arg(long, value_parser = language_parser(), default_value = "rust")]
        lang: cordon_scaffold::Language,
    },
    /// Build a plugin project (Rust, Python, JavaScript or C) into the plugins directory as NAME.wasm.
    /// It replaces a NAME.wasm there only when that file is this project's own last build.
    Build {
        /// The project directory [default: the current directory].
        dir: Option<PathBuf>,
        /// The plugin's name, and so its file NAME.wasm [default: the project directory's name].
        #[arg(long)]
        name: Option<String>,
        /// Replace a NAME.wasm that this project did not build (another plugin, installed or built
        /// from elsewhere).
        #[arg(long)]
        force: bool,
    },
    /// Show one tool's description and parameters schema.
    Describe {
        tool: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a batch of tool calls (a JSON array) and print the results in call order.
    /// Exit code 0 when every result succeeded, 1 when any is an error.
    Batch {
        /// File holding the calls, or `-` for stdin [default: -].
        file: Option<PathBuf>,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
        /// Stream events (start, update, log, HTTP request, path open, end, hook decision) as JSON
        /// lines on stderr.
        #[arg(long)]
        events: bool,
    },
    /// Serve the active tools over MCP: stdio by default, streamable HTTP with --http (with
    /// /healthz, /readyz and /metrics beside /mcp; SIGTERM or Ctrl-C drains it, then it exits 0).
    Serve {
        /// Speak streamable HTTP on this address instead of stdio.
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8808")]
        http: Option<std::net::SocketAddr>,
        /// Require `Authorization: Bearer <token>`, the token read from this environment variable.
        #[arg(long, value_name = "NAME")]
        token_env: Option<String>,
        /// Also accept this `Host` header value (repeatable), e.g. the name behind a load balancer.
        #[arg(long, value_name = "HOST")]
        allow_host: Vec<String>,
        /// Also accept requests from this browser origin (repeatable), e.g. https://app.example.com.
        #[arg(long, value_name = "ORIGIN")]
        allow_origin: Vec<String>,
        /// Serve /metrics without the bearer token even when --token-env sets one.
        #[arg(long)]
        metrics_public: bool,
        /// On SIGTERM or Ctrl-C, how long the calls in flight may take to finish before they are
        /// cancelled, e.g. 30s or 2m.
        #[arg(long, value_name = "DURATION", default_value = "30s",
              value_parser = cordon_runtime::config::parse_duration)]
        shutdown_grace: std::time::Duration,
        /// Tools per `tools/list` page; clients follow the cursor for the rest.
        #[arg(long, value_name = "N", default_value_t = cordon_mcp::DEFAULT_PAGE_SIZE,
              value_parser = clap::value_parser!(u64).range(1..10_000))]
        page_size: u64,
        /// List only a `search_tools` tool, which finds the active tools by what they do, for
        /// clients with no tool search of their own (every active tool stays callable by name).
        #[arg(long)]
        tool_search: bool,
        /// Do not watch the plugins directory, the config and the lockfile for changes (SIGHUP
        /// still reloads).
        #[arg(long)]
        no_watch: bool,
    },
    /// Run the agent loop on a prompt: the model calls the active tools until it answers.
    /// Exit code 0 with an answer, 1 without one, 2 on a setup error, 130 when cancelled.
    Run {
        /// The prompt, or `-` to read it from stdin [default: stdin].
        prompt: Option<String>,
        /// Make the model finish by calling `final_result` with arguments matching this JSON
        /// Schema; print them as JSON.
        #[arg(long, value_name = "FILE.json")]
        output_schema: Option<PathBuf>,
        #[command(flatten)]
        session: crate::cli::agent::SessionArgs,
    },
    /// Talk with the agent loop, one prompt per line, keeping the conversation.
    Chat {
        #[command(flatten)]
        session: crate::cli::agent::SessionArgs,
        /// Do not watch the plugins directory, the config and the lockfile for changes (SIGHUP
        /// still reloads).
        #[arg(long)]
        no_watch: bool,
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
        /// Stream events (start, update, log, HTTP request, path open, end, hook decision) as JSON
        /// lines on stderr.
        #[arg(long)]
        events: bool,
    },
}

impl Cli {
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        match &self.command {
            Command::New { name, lang } => {
                let project = cordon_scaffold::create(name, *lang, &self.plugins)?;
                crate::cli::render::stdout_line(&format!(
                    "created {}; build it with: cordon build {}",
                    project.display(),
                    project.display()
                ))?;
                return Ok(ExitCode::SUCCESS);
            }
            Command::Add {
                reference,
                name,
                sha256,
                force,
                policy,
            } => {
                let paths = self.install_paths();
                return match (reference, self.locked) {
                    (None, true) => install::sync(&paths).await,
                    (Some(_), true) => bail!(
                        "--locked installs exactly what the lockfile records: give no REF (or use `cordon sync`)"
                    ),
                    (None, false) => bail!(
                        "give the plugin to add: oci://HOST/REPOSITORY:TAG, https://…/NAME.wasm --sha256 HEX, or a path"
                    ),
                    (Some(reference), false) => {
                        let options = install::AddOptions {
                            name: name.as_deref(),
                            sha256: sha256.as_deref(),
                            force: *force,
                            policy: policy.as_deref(),
                            yes: self.yes,
                        };
                        install::add(&paths, reference, &options).await
                    }
                };
            }
            Command::Sync => return install::sync(&self.install_paths()).await,
            Command::Remove { name } => {
                if self.locked {
                    bail!(
                        "--locked keeps exactly the approved set: remove without it, then run `cordon lock`"
                    );
                }
                return uninstall::remove(&self.install_paths(), name);
            }
            Command::Test {
                files,
                json,
                deny_warnings,
                time_budget,
            } => {
                return plugin_test::run(plugin_test::PluginTest {
                    files: files.clone(),
                    plugins_dir: self.plugins.clone(),
                    // Grants only from an explicit --config: examples run for real.
                    config: match &self.config {
                        Some(path) => config_file::load(path)?,
                        None => Config::default(),
                    },
                    cache: self.install_paths().cache,
                    json: *json,
                    deny_warnings: *deny_warnings,
                    time_budget: *time_budget,
                })
                .await;
            }
            Command::Push { plugin, reference } => {
                return install::push(&self.install_paths(), plugin, reference).await;
            }
            Command::Build { dir, name, force } => {
                let output = cordon_scaffold::build(
                    dir.as_deref().unwrap_or(std::path::Path::new(".")),
                    &cordon_scaffold::BuildOptions {
                        plugins: &self.plugins,
                        name: name.as_deref(),
                        force: *force,
                        records: cordon_scaffold::BuildRecords::in_cache(
                            cordon_runtime::cordon_cache_dir().as_deref(),
                        ),
                    },
                )?;
                crate::cli::render::stdout_line(&format!(
                    "built {}",
                    one_line(&output.display().to_string())
                ))?;
                return Ok(ExitCode::SUCCESS);
            }
            _ => {}
        }
        let config = self.load_config()?;
        if matches!(self.command, Command::Lock) {
            let deployment = cordon_runtime::capabilities::lock::deployment(
                config.audit_path.as_deref(),
                &config.hook_order,
                config.batches.approval.lock_line(),
            );
            let pipeline = self.load_pipeline(config, None).await?;
            return self.write_lock(&pipeline, deployment);
        }
        let lock = if self.locked || config.locked {
            let path = self.lock_path();
            Some(
                Lockfile::load(&path)
                    .with_context(|| "loading is locked (--locked or [host] locked = true)")?,
            )
        } else {
            None
        };
        // Transcripts are the host's own files, like the config, lock and audit log: a plugin
        // that could rewrite one would write the next session's conversation.
        self.pipeline_loader().check_host_files(&config)?;
        let model = config.model.clone();
        let agent = config.agent.clone();
        // A live front end's baseline is what is on disk before the first load, so nothing
        // changed from here on goes unloaded.
        let watcher = match self.command {
            Command::Chat { no_watch, .. } | Command::Serve { no_watch, .. } if !no_watch => {
                Some(self.pipeline_loader().watch_from_now())
            }
            _ => None,
        };
        let pipeline = self.load_pipeline(config, lock).await?;
        match self.command {
            Command::Run {
                ref prompt,
                ref output_schema,
                ref session,
            } => {
                crate::cli::agent::run(
                    pipeline,
                    &model,
                    &agent,
                    session,
                    prompt.as_deref(),
                    output_schema.as_deref(),
                    approval_prompt::approver(self.yes),
                )
                .await
            }
            Command::Chat {
                ref session,
                no_watch: _,
            } => {
                // The conversation follows reloads of the plugins and the config.
                let (updates, current) = tokio::sync::watch::channel(pipeline.clone());
                let reloads = tokio::spawn(live_reload::reload_while_running(
                    self.pipeline_loader(),
                    live_reload::SessionPipeline(updates),
                    watcher,
                ));
                let _stop_reloads = AbortOnDrop(reloads);
                crate::cli::agent::chat(
                    pipeline,
                    current,
                    &model,
                    &agent,
                    session,
                    approval_prompt::approver(self.yes),
                )
                .await
            }
            Command::Lock
            | Command::New { .. }
            | Command::Build { .. }
            | Command::Add { .. }
            | Command::Sync
            | Command::Remove { .. }
            | Command::Test { .. }
            | Command::Push { .. } => {
                unreachable!("handled above")
            }
            Command::List { json } => {
                render::list(&pipeline, json)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Describe { ref tool, json } => {
                let Some((plugin, info)) = pipeline.registry().tool(tool) else {
                    bail!(
                        "no tool named {tool:?}; available tools: {}",
                        pipeline.registry().tool_names().join(", ")
                    );
                };
                render::describe(plugin, info, pipeline.is_active(tool), json)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Call {
                ref tool,
                ref args,
                json,
                ref id,
                events,
            } => {
                let arguments = read_arguments(args.as_deref())?;
                let request = CallRequest::new(id.clone(), tool.clone(), arguments);
                let approver = approval_prompt::approver(self.yes);
                let results = run_batch(&pipeline, vec![request], events, approver).await;
                render::call_result(&results[0], json)?;
                Ok(exit_code(&results))
            }
            Command::Serve {
                http,
                ref token_env,
                ref allow_host,
                ref allow_origin,
                metrics_public,
                shutdown_grace,
                page_size,
                tool_search,
                no_watch,
            } => {
                let mut server =
                    cordon_mcp::McpServer::new(pipeline).with_page_size(page_size as usize);
                if tool_search {
                    server = server.with_tool_search();
                }
                // Reloads run beside the server; clients that cache tools/list list again soon.
                if !no_watch {
                    server = server.with_list_ttl_ms(LIST_TTL_WHILE_WATCHING_MS);
                }
                let reloads = tokio::spawn(live_reload::reload_while_running(
                    self.pipeline_loader(),
                    server.clone(),
                    watcher,
                ));
                let _stop_reloads = AbortOnDrop(reloads);
                // Without --yes the client's user is asked (elicitation), never this terminal:
                // stdio is the protocol's.
                if let Some(everything) =
                    self.yes.then(|| approval_prompt::approver(true)).flatten()
                {
                    server = server.with_approver(everything);
                }
                match http {
                    None => server.serve_stdio().await?,
                    Some(addr) => {
                        let token = read_token(token_env.as_deref())?;
                        let options = cordon_mcp::http::HttpOptions {
                            addr,
                            token,
                            allowed_hosts: allow_host.clone(),
                            allowed_origins: allow_origin.clone(),
                            metrics_public,
                            shutdown_grace,
                        };
                        let signal = interrupt::termination_signal();
                        let shutdown = async move {
                            signal.await;
                            crate::cli::stdio_output::stderr_line(&format!(
                                "cordon: shutting down: refusing new requests, letting those in flight finish (for at most {shutdown_grace:?}; Ctrl-C again stops at once)"
                            ));
                        };
                        let listening = |local| {
                            crate::cli::stdio_output::stderr_line(&format!(
                                "cordon: serving MCP (streamable HTTP) at http://{local}{}",
                                cordon_mcp::http::MCP_PATH
                            ))
                        };
                        cordon_mcp::http::serve(server, options, listening, shutdown).await?;
                        crate::cli::stdio_output::stderr_line("cordon: stopped");
                    }
                }
                Ok(ExitCode::SUCCESS)
            }
            Command::Batch {
                ref file,
                json,
                events,
            } => {
                let text = read_input(file.as_deref())?;
                let calls = parse_batch(&text)?;
                let approver = approval_prompt::approver(self.yes);
                let results = run_batch(&pipeline, calls, events, approver).await;
                render::batch_results(&results, json)?;
                Ok(exit_code(&results))
            }
        }
    }

    fn load_config(&self) -> anyhow::Result<Config> {
        self.pipeline_loader().config()
    }

    fn install_paths(&self) -> install::InstallPaths {
        install::InstallPaths {
            plugins: self.plugins.clone(),
            config: self
                .config
                .clone()
                .unwrap_or_else(|| PathBuf::from("cordon.toml")),
            lock: self.lock_path(),
            cache: if self.no_cache {
                CompileCache::disabled()
            } else {
                CompileCache::default_location()
            },
        }
    }

    /// `--lock-file`, or cordon.lock beside the config file, or in the current directory.
    fn lock_path(&self) -> PathBuf {
        if let Some(path) = &self.lock_file {
            return path.clone();
        }
        let dir = self
            .config
            .as_deref()
            .and_then(std::path::Path::parent)
            .filter(|d| !d.as_os_str().is_empty());
        dir.unwrap_or(std::path::Path::new(".")).join("cordon.lock")
    }

    /// Approves every plugin that loaded, and says which did not.
    fn write_lock(&self, pipeline: &Pipeline, deployment: Vec<String>) -> anyhow::Result<ExitCode> {
        let path = self.lock_path();
        let mut lock = Lockfile::default();
        // Where `cordon add` installed plugins from stays recorded (for the plugins still here).
        if let Ok(previous) = Lockfile::load(&path) {
            lock.sources = previous
                .sources
                .into_iter()
                .filter(|(id, source)| {
                    pipeline.registry().plugins().iter().any(|plugin| {
                        &*plugin.id == id.as_str() && hex::encode(plugin.sha256) == source.sha256
                    })
                })
                .collect();
        }
        for plugin in pipeline.registry().plugins() {
            lock.approve(
                &plugin.id,
                &plugin.sha256,
                &plugin.grant,
                cordon_runtime::registry::declarations::lines(plugin),
            );
        }
        let deployment_line = deployment.join("; ");
        lock.approve_deployment(deployment);
        lock.write(&path)?;
        let approved = pipeline.registry().plugins();
        crate::cli::render::stdout_line(&format!(
            "wrote {}: {} plugin(s) approved:",
            one_line(&path.display().to_string()),
            approved.len()
        ))?;
        for plugin in approved {
            let grants = cordon_runtime::capabilities::lock::capabilities(&plugin.grant);
            let grants = if grants.is_empty() {
                "no grants".to_string()
            } else {
                grants.join("; ")
            };
            crate::cli::render::stdout_line(&format!(
                "  {}: {}",
                one_line(&plugin.id),
                one_line(&grants)
            ))?;
            if plugin.hook.is_some() && plugin.grant.hook.is_none() {
                crate::cli::render::stdout_line(&format!(
                    "    (its hook is not granted, so it will not run; grant it with `hook = true` in [plugins.{}])",
                    one_line(&plugin.id)
                ))?;
            }
        }
        crate::cli::render::stdout_line(&format!("  deployment: {}", one_line(&deployment_line)))?;
        for rejected in pipeline.registry().rejected() {
            crate::cli::render::stdout_line(&format!(
                "not approved (refused at load): {}: {}",
                one_line(&rejected.file.display().to_string()),
                one_line(&rejected.reason)
            ))?;
        }
        Ok(ExitCode::SUCCESS)
    }

    async fn load_pipeline(
        &self,
        config: Config,
        lock: Option<Lockfile>,
    ) -> anyhow::Result<Pipeline> {
        self.pipeline_loader().build(config, lock).await
    }

    /// How this command line loads its pipeline, again and again (live reloads).
    fn pipeline_loader(&self) -> live_reload::PipelineLoader {
        live_reload::PipelineLoader {
            plugins: self.plugins.clone(),
            config: self.config.clone(),
            locked: self.locked,
            lock_path: self.lock_path(),
            no_cache: self.no_cache,
            tools: self.tools.clone(),
            host_files: self.session_files(),
        }
    }

    /// The transcripts a `run` or `chat` writes or resumes, which no grant may reach.
    fn session_files(&self) -> Vec<(&'static str, PathBuf)> {
        let (Command::Run { session, .. } | Command::Chat { session, .. }) = &self.command else {
            return Vec::new();
        };
        let mut files = Vec::new();
        if let Some(transcript) = &session.transcript {
            files.push(("the transcript", transcript.clone()));
        }
        if let Some(resume) = &session.resume {
            files.push(("the transcript to resume", resume.clone()));
        }
        files
    }
}

/// How long a client may keep a `tools/list` result while the plugins are watched.
const LIST_TTL_WHILE_WATCHING_MS: u64 = 5_000;

/// Stops a background task when dropped (the server's reloads end with the server).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs a batch; the first Ctrl-C cancels it, a second one exits at once.
async fn run_batch(
    pipeline: &Pipeline,
    calls: Vec<CallRequest>,
    events: bool,
    approver: Option<Arc<dyn cordon_runtime::pipeline::Approver>>,
) -> Vec<cordon_runtime::ToolResult> {
    let cancel = CancellationToken::new();
    let watcher = interrupt_watcher(cancel.clone());
    let sink = events.then(|| -> cordon_runtime::pipeline::events::EventSink {
        Arc::new(|event: Event| render::event_line(&event))
    });
    let results = pipeline
        .run(
            calls,
            &BatchOptions {
                cancel,
                events: sink,
                approver,
            },
        )
        .await;
    watcher.abort();
    results
}

/// The bearer token named by `--token-env`, which must be set and non-empty.
fn read_token(env: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(name) = env else { return Ok(None) };
    match std::env::var(name) {
        Ok(token) if !token.trim().is_empty() => {
            cordon_runtime::report::secrets::register(&token);
            Ok(Some(token))
        }
        Ok(_) => bail!("--token-env {name}: the environment variable {name} is empty"),
        Err(_) => bail!("--token-env {name}: the environment variable {name} is not set"),
    }
}

fn exit_code(results: &[cordon_runtime::ToolResult]) -> ExitCode {
    if results.iter().any(|result| result.is_error) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A file's text, or stdin's for `-` or no file.
fn read_input(file: Option<&std::path::Path>) -> anyhow::Result<String> {
    match file {
        Some(path) if path != std::path::Path::new("-") => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the batch from stdin")?;
            Ok(text)
        }
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

/// `cordon new --lang`: the languages the templates cover, listed in `--help`.
fn language_parser() -> impl clap::builder::TypedValueParser<Value = cordon_scaffold::Language> {
    use clap::builder::TypedValueParser as _;
    use cordon_scaffold::Language;
    clap::builder::PossibleValuesParser::new(Language::ALL.map(Language::as_str))
        .map(|name| Language::named(&name).expect("a listed language"))
}
