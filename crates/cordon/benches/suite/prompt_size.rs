//! Section 13: what the agent loop's first request costs before the user's question is answered:
//! `cordon run` (the real binary) against the scripted model server, the request as sent
//! recorded, its system prompt and `tools` array counted in tokens with OpenAI's o200k BPE (the
//! GPT-4o encoding), for the bundled tools and for 160 more, with tool search as configured by
//! default (`auto`) and turned off (`never`).

use crate::report::{Report, Section};
use crate::setup::Setup;
use anyhow::Context as _;
use serde_json::Value;
use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// One measured request.
struct Measured {
    tools: usize,
    system_tokens: usize,
    tools_tokens: usize,
    total_tokens: usize,
}

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let bundled: Vec<(&str, std::path::PathBuf)> =
        ["fs", "csv_query", "json_query", "hash", "http_fetch"]
            .into_iter()
            .map(|id| (id, setup.guest(&format!("{id}.wasm"))))
            .chain([("echo", setup.guest("fixture_echo.wasm"))])
            .collect();
    let mut many = bundled.clone();
    many.push(("saas", setup.guest("fixture_many_tools.wasm")));
    let mut section = Section::new(
        "13. Prompt size of the first request",
        "`cordon run \"What is 12 times 11?\"` against the scripted model server, the first request \
         as sent: its system prompt and `tools` array in tokens (o200k BPE), with the default \
         `tool_search = \"auto\"` and with `\"never\"`. The bundled plugins and the echo fixture, \
         then with tests/fixtures/many_tools (160 tools) beside them.",
        &[
            "tools loaded",
            "tool_search",
            "tools offered",
            "system prompt",
            "tools array",
            "whole request",
        ],
    );
    for (name, plugins) in [("bundled", &bundled), ("many", &many)] {
        let refs: Vec<(&str, &Path)> = plugins
            .iter()
            .map(|(id, path)| (*id, path.as_path()))
            .collect();
        let dir = setup.plugins_dir(&format!("prompt-{name}"), &refs)?;
        let every = first_request(setup, &dir, "never")?;
        let searching = first_request(setup, &dir, "auto")?;
        for (mode, measured) in [("auto", searching), ("never", every)] {
            section.row(vec![
                plugins_tools(&dir, setup)?,
                mode.into(),
                measured.tools.to_string(),
                measured.system_tokens.to_string(),
                measured.tools_tokens.to_string(),
                measured.total_tokens.to_string(),
            ]);
        }
    }
    report.add(section);
    Ok(())
}

/// How many tools the plugins in `dir` provide, by `cordon list --json`.
fn plugins_tools(dir: &Path, setup: &Setup) -> anyhow::Result<String> {
    let output = Command::new(&setup.cordon_bin)
        .arg("--plugins")
        .arg(dir)
        .args(["list", "--json"])
        .current_dir(setup.scratch.path())
        .stdin(Stdio::null())
        .output()?;
    let listed: Value = serde_json::from_slice(&output.stdout)?;
    Ok(listed["tools"].as_array().map_or(0, Vec::len).to_string())
}

fn first_request(setup: &Setup, plugins: &Path, mode: &str) -> anyhow::Result<Measured> {
    let scratch = setup.scratch.path().join(format!(
        "prompt-run-{}-{mode}",
        plugins.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::create_dir_all(&scratch)?;
    std::fs::write(
        scratch.join("script.json"),
        r#"{"replies": [{"text": "132"}]}"#,
    )?;
    std::fs::write(
        scratch.join("cordon.toml"),
        format!("[agent]\ntool_search = \"{mode}\"\n"),
    )?;
    let record = scratch.join("requests.jsonl");
    let server_script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scripted_model/scripted_model.py");
    let mut server = Command::new("python3")
        .arg(&server_script)
        .arg(scratch.join("script.json"))
        .arg("--record")
        .arg(&record)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("python3 runs the scripted model server")?;
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().context("the server's stdout")?)
        .read_line(&mut line)?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .context("the scripted model did not start")?
        .to_string();
    let output = Command::new(&setup.cordon_bin)
        .arg("--plugins")
        .arg(plugins)
        .args([
            "--config",
            "cordon.toml",
            "run",
            "--no-stream",
            "--base-url",
        ])
        .arg(format!("{url}/v1"))
        .args([
            "--model",
            "scripted",
            "--context-window",
            "200000",
            "What is 12 times 11?",
        ])
        .current_dir(&scratch)
        .stdin(Stdio::null())
        .output()?;
    let _ = server.kill();
    let _ = server.wait();
    anyhow::ensure!(
        output.status.success(),
        "cordon run failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(&record)?
            .lines()
            .next()
            .context("no request was recorded")?,
    )?;
    let body = &first["body"];
    let bpe = tiktoken_rs::o200k_base_singleton();
    let count = |text: &str| bpe.encode_with_special_tokens(text).len();
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let tools = body["tools"].as_array().map_or(0, Vec::len);
    Ok(Measured {
        tools,
        system_tokens: count(system),
        tools_tokens: count(&body["tools"].to_string()),
        total_tokens: count(&body.to_string()),
    })
}
