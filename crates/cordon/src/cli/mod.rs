//! Command-line interface: the clap types and one dispatch to the file of each command
//! (`project_commands`, `lock_command`, `call_commands`, `serve_command`, `session_commands`).
//! How a command loads what it runs is `loading.rs`; output formatting is `render.rs`.

mod agent;
mod approval_prompt;
mod build_watch;
mod call_commands;
mod config_file;
pub mod host_secrets;
mod install;
mod interrupt;
mod live_reload;
mod live_view;
mod loading;
mod lock_command;
mod offer_commands;
mod plugin_test;
mod project_commands;
pub mod render;
mod render_offers;
mod serve_command;
mod session_commands;
mod signatures;
pub mod stdio_output;
pub mod telemetry_setup;
mod trust_policy;
mod uninstall;
mod verify_command;
mod wassette_import;

use anyhow::bail;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
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
    /// Load only the plugins approved in the lockfile (also `[host] locked = true`).
    #[arg(long, global = true)]
    pub locked: bool,
    /// Start even when a plugin granted a hook is missing or refused (also `[host]
    /// allow_missing_hooks = true`); by default that refuses the start, since what the hook
    /// guards would run unguarded.
    #[arg(long, global = true)]
    pub allow_missing_hooks: bool,
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
    /// List the tools and hooks of every loaded plugin, and the plugins that were refused. Exits 1
    /// when a plugin file was refused (its reason is listed), unless --allow-refused.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Exit 0 even when plugin files were refused (they are still listed, with why).
        #[arg(long)]
        allow_refused: bool,
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
        /// Let the policy's grants include `/`, your home directory or a directory holding this
        /// project (left out otherwise, even with --yes).
        #[arg(long)]
        allow_broad_grants: bool,
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
        /// Sign the pushed artifact with this key (a PKCS#8 PEM private key, ECDSA P-256 or
        /// Ed25519), stored as cosign stores keyed signatures.
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
    },
    /// Check who signed a plugin against [trust]: REF as `cordon add` takes it, or the name of
    /// a plugin cordon.lock records. Prints what was found; exit 1 when [trust] would refuse it.
    Verify {
        /// oci://HOST/REPOSITORY:TAG (or @sha256:DIGEST), a URL, a path, or an installed name.
        reference: String,
    },
    /// Check plugins against the contract, as the host would load them: names and schemas
    /// (strict-mode form included), each tool called with its schema's `examples`, the hook run
    /// over a sample call, and the author's own cases (PLUGIN/cases.toml beside PLUGIN.wasm, or
    /// --cases). Exit 1 when one fails. [default: every plugin in --plugins]
    Test {
        /// The plugin files (.wasm).
        files: Vec<PathBuf>,
        /// A cases file to run (docs/testing-plugins.md) instead of the one beside the plugin;
        /// with one plugin file only.
        #[arg(long, value_name = "FILE")]
        cases: Option<PathBuf>,
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
        /// What the project starts as: a tool, a tool hook (docs/pipeline.md), a session hook
        /// (docs/session-hooks.md), or a tool with an Agent Skill beside it (skill;
        /// docs/resources-prompts-skills.md).
        #[arg(long, value_parser = template_parser(), default_value = "tool")]
        template: cordon_scaffold::Template,
        /// Start as a hook: `before` or `after` a tool call, `both`, or `session` (a session
        /// hook); the same as --template before-hook, after-hook, hook or session-hook.
        #[arg(long, value_name = "WHERE", num_args = 0..=1, default_missing_value = "both",
              value_parser = ["before", "after", "both", "session"], conflicts_with = "template")]
        hook: Option<String>,
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
        /// Build again whenever a file of the project changes, until interrupted (a failed build
        /// is reported and the watch goes on).
        #[arg(long)]
        watch: bool,
    },
    /// Read a resource a plugin serves (`cordon list` shows them), in its sandbox.
    Read {
        uri: String,
        /// Print the MCP-shaped contents as JSON.
        #[arg(long)]
        json: bool,
        /// Write the contents as they are (bytes unencoded, text unsanitised).
        #[arg(long)]
        raw: bool,
    },
    /// Fill in a prompt a plugin serves with NAME=VALUE arguments, and print its messages.
    Prompt {
        name: String,
        arguments: Vec<String>,
        /// Print the messages as JSON.
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
        /// Offer each granted hook as a tool too, `hook_ID`, which answers what the hook decides
        /// about a sample tool call, result or session event (docs/hooks-as-tools.md).
        #[arg(long)]
        hooks_as_tools: bool,
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
    /// Runs the command; the exit code says how it went (0, 1 for a tool error, 2 for usage).
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        match &self.command {
            Command::New {
                name,
                lang,
                template,
                hook,
            } => {
                let template = match hook.as_deref() {
                    None => *template,
                    Some(points) => {
                        let named = match points {
                            "before" => "before-hook",
                            "after" => "after-hook",
                            "session" => "session-hook",
                            _ => "hook",
                        };
                        cordon_scaffold::Template::named(named).expect("a listed template")
                    }
                };
                self.new_project(name, *lang, template)
            }
            Command::Build {
                dir,
                name,
                force,
                watch: false,
            } => self.build_project(dir.as_deref(), name.as_deref(), *force),
            Command::Build {
                dir,
                name,
                force,
                watch: true,
            } => build_watch::run(dir.as_deref().unwrap_or(Path::new(".")), || {
                self.build_project(dir.as_deref(), name.as_deref(), *force)
            }),
            Command::Add {
                reference,
                name,
                sha256,
                force,
                policy,
                allow_broad_grants,
            } => {
                self.add(project_commands::AddArgs {
                    reference: reference.as_deref(),
                    name: name.as_deref(),
                    sha256: sha256.as_deref(),
                    force: *force,
                    policy: policy.as_deref(),
                    allow_broad_grants: *allow_broad_grants,
                })
                .await
            }
            Command::Sync => install::sync(&self.install_paths()).await,
            Command::Remove { name } => self.remove(name),
            Command::Push {
                plugin,
                reference,
                sign,
            } => install::push(&self.install_paths(), plugin, reference, sign.as_deref()).await,
            Command::Verify { reference } => {
                verify_command::run(&self.install_paths(), reference).await
            }
            Command::Test {
                files,
                cases,
                json,
                deny_warnings,
                time_budget,
            } => {
                self.test(project_commands::TestArgs {
                    files,
                    cases: cases.as_deref(),
                    json: *json,
                    deny_warnings: *deny_warnings,
                    time_budget: *time_budget,
                })
                .await
            }
            Command::Lock => self.lock().await,
            Command::List {
                json,
                allow_refused,
            } => {
                let loaded = self.load(false).await?;
                let pipeline = loaded.pipeline;
                let signers = signatures::provenance(&loaded.trust, &self.lock_path(), &pipeline);
                render::list(&pipeline, &signers, *json)?;
                let refused = pipeline.registry().rejected().len();
                if refused == 0 || *allow_refused {
                    return Ok(ExitCode::SUCCESS);
                }
                crate::cli::stdio_output::stderr_line(&format!(
                    "error: {refused} plugin file{} refused (listed with why under \"Rejected plugins\"); fix or remove {}, or pass --allow-refused to exit 0",
                    if refused == 1 { " was" } else { "s were" },
                    if refused == 1 { "it" } else { "them" }
                ));
                Ok(ExitCode::from(1))
            }
            Command::Read { uri, json, raw } => {
                let pipeline = self.load(false).await?.pipeline;
                offer_commands::read(&pipeline, uri, *json, *raw).await
            }
            Command::Prompt {
                name,
                arguments,
                json,
            } => {
                let pipeline = self.load(false).await?.pipeline;
                offer_commands::prompt(&pipeline, name, arguments, *json).await
            }
            Command::Describe { tool, json } => {
                let pipeline = self.load(false).await?.pipeline;
                let Some((plugin, info)) = pipeline.registry().tool(tool) else {
                    bail!(
                        "no tool named {tool:?}; available tools: {}",
                        pipeline.registry().tool_names().join(", ")
                    );
                };
                render::describe(plugin, info, pipeline.is_active(tool), *json)?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Call {
                tool,
                args,
                json,
                id,
                events,
            } => {
                self.call(call_commands::CallArgs {
                    tool,
                    args: args.as_deref(),
                    json: *json,
                    id,
                    events: *events,
                })
                .await
            }
            Command::Batch { file, json, events } => {
                self.batch(file.as_deref(), *json, *events).await
            }
            Command::Serve {
                http,
                token_env,
                allow_host,
                allow_origin,
                metrics_public,
                shutdown_grace,
                page_size,
                tool_search,
                hooks_as_tools,
                no_watch,
            } => {
                self.serve(serve_command::ServeArgs {
                    http: *http,
                    token_env: token_env.as_deref(),
                    allow_host,
                    allow_origin,
                    metrics_public: *metrics_public,
                    shutdown_grace: *shutdown_grace,
                    page_size: *page_size,
                    tool_search: *tool_search,
                    hooks_as_tools: *hooks_as_tools,
                    no_watch: *no_watch,
                })
                .await
            }
            Command::Run {
                prompt,
                output_schema,
                session,
            } => {
                self.run_task(prompt.as_deref(), output_schema.as_deref(), session)
                    .await
            }
            Command::Chat { session, no_watch } => self.chat(session, *no_watch).await,
        }
    }
}

/// `cordon new --lang`: the languages the templates cover, listed in `--help`.
fn language_parser() -> impl clap::builder::TypedValueParser<Value = cordon_scaffold::Language> {
    use clap::builder::TypedValueParser as _;
    use cordon_scaffold::Language;
    clap::builder::PossibleValuesParser::new(Language::ALL.map(Language::as_str))
        .map(|name| Language::named(&name).expect("a listed language"))
}

/// `cordon new --template`: what a project can start as, listed in `--help`.
fn template_parser() -> impl clap::builder::TypedValueParser<Value = cordon_scaffold::Template> {
    use clap::builder::TypedValueParser as _;
    use cordon_scaffold::Template;
    clap::builder::PossibleValuesParser::new(Template::ALL.map(Template::as_str))
        .map(|name| Template::named(&name).expect("a listed template"))
}
