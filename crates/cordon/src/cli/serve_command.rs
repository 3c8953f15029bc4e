//! `cordon serve`: the active tools over MCP, on stdio or streamable HTTP, with live reloads
//! beside the server and a graceful shutdown on SIGTERM.

use super::{Cli, approval_prompt, interrupt, live_reload};
use anyhow::bail;
use std::process::ExitCode;

/// How long a client may keep a `tools/list` result while the plugins are watched.
const LIST_TTL_WHILE_WATCHING_MS: u64 = 5_000;

/// What `cordon serve` was given.
pub(super) struct ServeArgs<'a> {
    pub http: Option<std::net::SocketAddr>,
    pub token_env: Option<&'a str>,
    pub allow_host: &'a [String],
    pub allow_origin: &'a [String],
    pub metrics_public: bool,
    pub shutdown_grace: std::time::Duration,
    pub page_size: u64,
    pub tool_search: bool,
    pub hooks_as_tools: bool,
    pub no_watch: bool,
}

impl Cli {
    /// Serves until the client leaves (stdio) or a termination signal has drained it (HTTP).
    pub(super) async fn serve(&self, args: ServeArgs<'_>) -> anyhow::Result<ExitCode> {
        let loaded = self.load(!args.no_watch).await?;
        let mut server =
            cordon_mcp::McpServer::new(loaded.pipeline).with_page_size(args.page_size as usize);
        if args.tool_search {
            server = server.with_tool_search();
        }
        if args.hooks_as_tools {
            server = server.with_hooks_as_tools();
        }
        // Reloads run beside the server; clients that cache tools/list list again soon.
        if !args.no_watch {
            server = server.with_list_ttl_ms(LIST_TTL_WHILE_WATCHING_MS);
        }
        let reloads = tokio::spawn(live_reload::reload_while_running(
            self.pipeline_loader(),
            server.clone(),
            loaded.watcher,
        ));
        let _stop_reloads = live_reload::AbortOnDrop(reloads);
        // Without --yes the client's user is asked (elicitation), never this terminal: stdio is
        // the protocol's.
        if let Some(everything) = self.yes.then(|| approval_prompt::approver(true)).flatten() {
            server = server.with_approver(everything);
        }
        let Some(addr) = args.http else {
            server.serve_stdio().await?;
            return Ok(ExitCode::SUCCESS);
        };
        let shutdown_grace = args.shutdown_grace;
        let options = cordon_mcp::http::HttpOptions {
            addr,
            token: read_token(args.token_env)?,
            allowed_hosts: args.allow_host.to_vec(),
            allowed_origins: args.allow_origin.to_vec(),
            metrics_public: args.metrics_public,
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
        Ok(ExitCode::SUCCESS)
    }
}

/// The bearer token named by `--token-env`, which must be set and non-empty.
fn read_token(env: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(name) = env else { return Ok(None) };
    match std::env::var(name) {
        Ok(token) if !token.trim().is_empty() => {
            crate::cli::host_secrets::host_secrets().register(&token);
            Ok(Some(token))
        }
        Ok(_) => bail!("--token-env {name}: the environment variable {name} is empty"),
        Err(_) => bail!("--token-env {name}: the environment variable {name} is not set"),
    }
}
