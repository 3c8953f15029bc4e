//! Embedding cordon in a Rust program: load `plugins/` with the grants of `cordon.toml`, run two
//! calls as one batch (hooks included), print each result. From the repository's root:
//! `cargo run -p cordon-runtime --example embed`.

use cordon_runtime::{CallRequest, RuntimeBuilder};

#[tokio::main]
async fn main() -> Result<(), cordon_runtime::BuildError> {
    let pipeline = RuntimeBuilder::new("plugins")
        .config_file_if_present("cordon.toml")
        .build()
        .await?;
    let calls = vec![
        CallRequest::new(
            "1",
            "read_file",
            r#"{"path": "/repo/README.md", "limit": 1}"#,
        ),
        CallRequest::new(
            "2",
            "write_file",
            r#"{"path": "/scratch/.env", "content": "KEY=1"}"#,
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
