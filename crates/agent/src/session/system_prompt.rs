//! The agent loop's default system prompt: what cordon is, which tools this session has, and to
//! prefer them over guessing. `[agent] system_prompt` or `--system` replaces it.

use crate::model::provider::ToolSpec;
use std::fmt::Write as _;

pub fn default_prompt(tools: &[ToolSpec]) -> String {
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
         are done, reply with your final answer.",
    );
    prompt
}
