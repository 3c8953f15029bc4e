//! The agent loop's default system prompt, kept short: it does not repeat what the request's
//! `tools` array already says (no tool list, no descriptions). It carries how tool results read
//! (an error result says what went wrong), the prompt guidelines the active tools declare
//! (contract 0.2), how to find tools when the session searches for them, and the facts of the
//! environment (the date and time, and where the tools may work). `[agent] system_prompt` or
//! `--system` replaces it.

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
    /// Whether there are any active tools.
    pub has_tools: bool,
    /// `[agent.groups]` with their active tool counts, for a session that searches.
    pub groups: Vec<(String, usize)>,
}

impl Environment {
    /// The environment of `pipeline`'s active tools, now.
    pub fn of(pipeline: &Pipeline) -> Self {
        let now = UtcTime::now();
        let (mut directories, mut origins, mut guidelines) = (Vec::new(), Vec::new(), Vec::new());
        let mut has_tools = false;
        for (plugin, tool) in pipeline.active_tools() {
            has_tools = true;
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
        let groups = pipeline
            .groups()
            .keys()
            .filter_map(|name| {
                let count = pipeline.group_tools(name)?.len();
                (count > 0).then(|| (name.clone(), count))
            })
            .collect();
        Self {
            now: format!(
                "{:04}-{:02}-{:02} {:02}:{:02} UTC",
                now.year, now.month, now.day, now.hour, now.minute
            ),
            directories,
            origins,
            guidelines,
            has_tools,
            groups,
        }
    }
}

/// The prompt for a session over `environment`'s tools; `searching`: the model finds its tools
/// with `search_tools`.
pub fn default_prompt(environment: &Environment, searching: bool) -> String {
    let mut prompt = String::from("You are a capable assistant.");
    if !environment.has_tools {
        prompt.push_str(" This session has no tools: answer from what you know.");
        let _ = write!(prompt, " It is now {}.", environment.now);
        return prompt;
    }
    prompt.push_str(
        " Use a tool when it can find or check the answer; answer directly when none is needed. \
         Independent calls can go in one reply. If a tool result is an error, it says what went \
         wrong: fix the call and try again, or say what you could not do.",
    );
    if searching {
        prompt.push_str(
            " Only some tools are loaded: when you need one, call search_tools with a few words \
             saying what it should do; the tools it finds can be called from then on.",
        );
        if !environment.groups.is_empty() {
            let groups: Vec<String> = environment
                .groups
                .iter()
                .map(|(name, count)| format!("{name} ({count})"))
                .collect();
            let _ = write!(
                prompt,
                " Groups search_tools loads whole by name: {}.",
                groups.join(", ")
            );
        }
    }
    if !environment.guidelines.is_empty() {
        prompt.push_str("\nGuidelines from the tools:");
        for line in &environment.guidelines {
            let _ = write!(prompt, "\n- {line}");
        }
        prompt.push('\n');
    } else {
        prompt.push(' ');
    }
    let _ = write!(prompt, "It is now {}.", environment.now);
    if !environment.directories.is_empty() {
        let _ = write!(
            prompt,
            " The tools work only in these directories (use absolute paths under them): {}.",
            environment.directories.join(", ")
        );
    }
    if !environment.origins.is_empty() {
        let _ = write!(
            prompt,
            " They reach only these web origins: {}.",
            environment.origins.join(", ")
        );
    }
    prompt
}
