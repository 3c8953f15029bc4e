//! What an operator grants a plugin, and nothing else: directories, outbound HTTP (and the gate
//! every request passes), env vars, resource limits, the right to hook other tools, the lock that
//! pins what was approved, and what it says about the tools of components that cannot say it.

pub mod config_secrets;
pub mod grant;
pub mod grant_notice;
pub mod limits;
pub mod lock;
mod lock_refusal;
pub mod net;
pub mod tool_glob;
pub mod tool_overrides;
