//! The bundled `fs` plugin: read, write, edit, list, find and grep files, only inside the
//! directories the operator granted (WASI preopens). The sandbox enforces the grants; this plugin
//! also checks paths up front so the model gets a clear message naming what it may use.

mod edit;
mod file_bytes;
mod find;
mod grep;
mod ignore_rules;
mod line_search;
mod list;
mod read;
mod roots;
mod text;
mod walk;
mod write;

cordon_sdk::export_plugin!(tools: [
    read::ReadFile,
    write::WriteFile,
    edit::EditFile,
    list::ListDir,
    find::FindFiles,
    grep::Grep,
]);
