//! `cordon new` and `cordon build`: start a plugin project from a working template, and build a
//! plugin project into `plugins/NAME.wasm` with its language's toolchain. A missing toolchain is an
//! error that gives the exact command to install it.

mod build;
mod project;
mod templates;

pub use build::{BuildOptions, BuildRecords, Built, build};
pub use project::{HookPoints, Language, ScaffoldError, Template, is_valid_name};
pub use templates::create;
