//! Embedding cordon in a Rust program with nothing configured on disk: two plugins given as bytes
//! (the bundled fs tools and the guard hook), their grants made in code (checked exactly as
//! cordon.toml's would be), and two calls with JSON-value arguments run as one batch, hooks
//! included; each result is printed. From a directory holding `plugins/fs.wasm`,
//! `plugins/guard.wasm`, `data/` and `scratch/`: `cargo run -p cordon-runtime --example embed`.

use cordon_runtime::capabilities::grant::Access;
use cordon_runtime::config::{Config, GrantBuilder};
use cordon_runtime::{CallRequest, RuntimeBuilder};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut config = Config::default();
    config
        .grant(
            "fs",
            GrantBuilder::new()
                .dir("data", "/repo", Access::ReadOnly)
                .dir("scratch", "/scratch", Access::ReadWrite),
        )?
        .grant("guard", GrantBuilder::new().hook([]))?;
    let pipeline = RuntimeBuilder::without_directory()
        .plugin("fs", std::fs::read("plugins/fs.wasm")?)
        .plugin("guard", std::fs::read("plugins/guard.wasm")?)
        .config(config)
        .build()
        .await?;
    let calls = vec![
        CallRequest::with_value(
            "1",
            "read_file",
            &json!({"path": "/repo/README.md", "limit": 1}),
        ),
        CallRequest::with_value(
            "2",
            "write_file",
            &json!({"path": "/scratch/.env", "content": "KEY=1"}),
        ),
    ];
    for result in pipeline.run(calls, &Default::default()).await {
        let outcome = match result.error_kind {
            Some(kind) => kind.as_str(),
            None => "ok",
        };
        println!("{} {}: {}", result.tool_name, outcome, result.text());
    }
    Ok(())
}
