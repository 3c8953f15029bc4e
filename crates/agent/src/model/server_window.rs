//! Asking an OpenAI-compatible server for its context window. llama.cpp's server answers
//! `GET /props` with `default_generation_settings.n_ctx` (and, in some versions, a top-level
//! `n_ctx`); servers without that endpoint are simply not asked twice.

use serde_json::Value;
use std::time::Duration;

/// The window the server at `base_url` (the API base, usually ending in `/v1`) reports.
pub async fn ask(http: &reqwest::Client, base_url: &str) -> Option<u32> {
    let root = base_url
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .trim_end_matches('/');
    let response = http
        .get(format!("{root}/props"))
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let bytes = response.bytes().await.ok()?;
    let body: Value = serde_json::from_slice(&bytes).ok()?;
    let window = body
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| body.get("n_ctx"))
        .and_then(Value::as_u64)?;
    u32::try_from(window).ok().filter(|window| *window > 0)
}
