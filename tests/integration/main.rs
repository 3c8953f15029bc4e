//! Integration tests: real plugins (built once per run by `make test`) loaded by the real host,
//! through the `cordon` binary and through the library.

mod support;

mod agent_context;
mod agent_loop;
mod agent_sanity;
mod agent_sessions;
mod approval_terminal;
mod audit;
mod bundled_hooks;
mod c_sdk;
mod cache;
mod cli;
mod contract_v2;
mod distribution;
mod distribution_attacks;
mod distribution_attacks_2;
mod embedding;
mod fs_tools;
mod fuzz;
mod hooks;
mod hostile;
mod hostile_grants;
mod hostile_hooks;
mod hostile_http;
mod hostile_network;
mod hostile_output;
mod hostile_resources;
mod js_sdk;
mod layering;
mod loading;
mod lockfile;
mod mcp_stdio;
mod model_server;
mod network;
mod pipeline;
mod plugin_test;
mod python_sdk;
mod redteam_v2;
mod redteam_v2b;
mod sandbox;
mod scaffold;
mod secret_scrubbing;
mod serve_and_conformance_attacks;
mod strict_schemas;
mod uninstall;
