//! Attacks, one module per surface an attacker reaches: hostile plugins and what they may be
//! granted, a plugin's secrets, hooks, the network, loading, model replies, output, host resources,
//! installation, locks and approvals, questions and cancellation, registry credentials and
//! responses, `cordon serve` and `cordon test`, session hooks and transcripts. Each test is named
//! for what it proves holds; SECURITY.md lists them by promise.

mod config_secrets;
mod grants;
mod hooks;
mod install;
mod loading;
mod lock_and_approval;
mod model_replies;
mod network;
mod output;
mod plugins;
mod question_and_cancel;
mod registry_credentials;
mod registry_responses;
mod resources;
mod serve_and_conformance;
pub(crate) mod session_hooks;
mod transcripts;
