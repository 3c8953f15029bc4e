//! The agent loop's default system prompt: what cordon is, which tools this session has, to prefer
//! them over guessing, the prompt guidelines the active tools declare (contract 0.2), and the facts
//! of its environment (the date and time, and where the tools may work). `[agent] system_prompt`
//! or `--system` replaces it.

use crate::model::provider::ToolSpec;
use cordon_runtime::Pipeline;
use cordon_runtime::capabilities::grant::Access;
use cordon_runtime::report::utc_time::UtcTime;
use std::fmt::Write as _;

/// What the model should know of where it runs: the time, and the directories and web origins
/// the active tools were granted (so it asks for paths and URLs that can work).
pub struct Environment {
    /// `2026-11-30 23:58 UTC`.
    pub now: String,
    /// `/repo (read-only)`, ... in the order granted, each once.
    pub directories: Vec<String>,
    /// `https://api.example.com:443`, ... each once.
    pub origins: Vec<String>,
    /// The active tools' prompt guidelines, in tool order, each once.
    pub guidelines: Vec<String>,
}

impl Environment {
    /// The environment of `pipeline`'s active tools, now.
    pub fn of(pipeline: &Pipeline) -> Self {
        let now = UtcTime::now();
        let (mut directories, mut origins, mut guidelines) = (Vec::new(), Vec::new(), Vec::new());
        for (plugin, tool) in pipeline.active_tools() {
            for line in &tool.prompt_guidelines {
                if !guidelines.contains(line) {
                    guidelines.push(line.clone());
                }
            }
            for dir in &plugin.grant.dirs {
                let access = match dir.access {
                    Access::ReadOnly => "read-only",
                    Access::ReadWrite => "read-write",
                };
                let line = format!("{} ({access})", dir.guest);
                if !directories.contains(&line) {
                    directories.push(line);
                }
            }
            for grant in plugin.grant.http.iter() {
                let origin = grant.origin();
                if !origins.contains(&origin) {
                    origins.push(origin);
                }
            }
        }
        Self {
            now: format!(
                "{:04}-{:02}-{:02} {:02}:{:02} UTC",
                now.year, now.month, now.day, now.hour, now.minute
            ),
            directories,
            origins,
            guidelines,
        }
    }
}

pub fn default_prompt(tools: &[ToolSpec], environment: &Environment) -> String {
    let mut prompt = String::from(
        "You are a capable assistant. You can call tools; each runs in a sandbox and its result \
         comes back to you. A result that starts with \"Error\" says what went wrong and why \
         (for example invalid_arguments, not_found, timeout, capability_denied, blocked): adjust \
         and try again if that helps, or explain what you could not do.\n",
    );
    if tools.is_empty() {
        prompt.push_str("This session has no tools: answer from what you know.\n");
        return prompt;
    }
    prompt.push_str("The tools of this session:\n");
    for tool in tools {
        let summary = tool.description.lines().next().unwrap_or("").trim();
        let _ = writeln!(prompt, "- {}: {summary}", tool.name);
    }
    prompt.push_str(
        "Prefer calling a tool over guessing whenever a tool can find or check the answer. \
         Independent calls can be made together in one reply; they run in parallel. When you \
         are done, reply with your final answer.\n",
    );
    if !environment.guidelines.is_empty() {
        prompt.push_str("Guidelines from the tools:\n");
        for line in &environment.guidelines {
            let _ = writeln!(prompt, "- {line}");
        }
    }
    let _ = write!(prompt, "It is now {}.", environment.now);
    if !environment.directories.is_empty() {
        let _ = write!(
            prompt,
            " The tools can work only in these directories (use absolute paths under them): {}.",
            environment.directories.join(", ")
        );
    }
    if !environment.origins.is_empty() {
        let _ = write!(
            prompt,
            " They can reach only these web origins: {}.",
            environment.origins.join(", ")
        );
    }
    prompt
}
