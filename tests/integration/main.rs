//! Integration tests: real plugins (built once per run by `make test`) loaded by the real host,
//! through the `cordon` binary and through the library. `support/` holds the helpers (a
//! workspace, the scripted model, a stdio server, a real OCI registry), `attacks/` the attacks
//! by surface, `meta/` the checks on the repository itself; the modules below test one feature
//! each.

mod attacks;
mod meta;
mod support;

mod after_hook_replace;
mod agent_context;
mod agent_loop;
mod agent_sanity;
mod agent_sessions;
mod agent_tool_search;
mod approval_terminal;
mod async_components;
mod audit;
mod build_watch;
mod bundled_hooks;
mod bundled_session_hooks;
mod c_sdk;
mod cache;
mod cli;
mod command_programs;
mod contract_v2;
mod disk_limits;
mod distribution;
mod embedding;
mod fs_tools;
mod fuzz;
mod hooks;
mod intent_routing;
mod js_sdk;
mod live_chat;
mod loading;
mod lockfile;
mod mcp_stdio;
mod network;
mod offers;
mod outside_grants;
mod pipeline;
mod plain_components;
mod plain_languages;
mod plugin_test;
mod policy_import;
mod python_sdk;
mod result_memory;
mod sandbox;
mod scaffold;
mod scaffold_hooks;
mod secret_scrubbing;
mod session_hooks;
mod session_promises;
mod session_sdks;
mod signed_plugins;
mod skills;
mod strict_schemas;
mod terminal_lines;
mod uninstall;
