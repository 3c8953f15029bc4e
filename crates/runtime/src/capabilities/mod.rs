//! What an operator grants a plugin, and nothing else: directories, outbound HTTP (and the gate
//! every request passes), env vars, resource limits, the right to hook other tools, and the lock
//! that pins what was approved.

pub mod grant;
pub mod limits;
pub mod lock;
mod lock_refusal;
pub mod net;
pub mod tool_glob;
