//! The agent loop's default system prompt, kept short: it does not repeat what the request's
//! `tools` array already says (no tool list, no descriptions). It carries how tool results read
//! (an error result says what went wrong), the prompt guidelines the active tools declare
//! (contract 0.2), how to find tools when the session searches for them, and the facts of the
//! environment (the date and time, and where each tool may work). `[agent] system_prompt` or
//! `--system` replaces it.

use cordon_runtime::Pipeline;
use cordon_runtime::capabilities::grant::Access;
use cordon_runtime::report::utc_time::UtcTime;
use std::fmt::Write as _;

/// What the model should know of where it runs: the time, and the directories and web origins
/// the active tools were granted, tool by tool (so it asks each for paths and URLs that can work).
pub struct Environment {
    /// `2026-11-30 23:58 UTC`.
    pub now: String,
    /// The active tools granted directories, grouped by the directories they share
    /// (`/repo (read-only)`, ... in the order granted).
    pub directories: Vec<Reach>,
    /// The active tools granted web origins, grouped by the origins they share
    /// (`https://api.example.com:443`, ...).
    pub origins: Vec<Reach>,
    /// The active tools' prompt guidelines, in tool order, each once.
    pub guidelines: Vec<String>,
    /// Whether there are any active tools.
    pub has_tools: bool,
    /// `[agent.groups]` with their active tool counts, for a session that searches.
    pub groups: Vec<(String, usize)>,
    /// The skills, each a line `- NAME: "what it is for"` (at most [`MAX_SKILL_ENTRY_BYTES`]);
    /// a plugin's skill is `PLUGIN/NAME`.
    pub skills: Vec<String>,
}

/// The most bytes one skill adds to the prompt's list of skills, its separator included; with
/// the list's opening words, one skill adds at most 200 bytes.
pub const MAX_SKILL_ENTRY_BYTES: usize = 130;

/// Tools that may use the same places (directories, or web origins), and those places.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// The tools' names, in the order they are offered.
    pub tools: Vec<String>,
    /// The places, each once.
    pub places: Vec<String>,
}

/// Adds `tool` to the group of `reaches` with exactly `places`, or starts one; nothing for no
/// places.
fn add_reach(reaches: &mut Vec<Reach>, tool: &str, places: Vec<String>) {
    if places.is_empty() {
        return;
    }
    match reaches.iter_mut().find(|reach| reach.places == places) {
        Some(reach) => reach.tools.push(tool.to_string()),
        None => reaches.push(Reach {
            tools: vec![tool.to_string()],
            places,
        }),
    }
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
            let mut dirs = Vec::new();
            for dir in &plugin.grant.dirs {
                let access = match dir.access {
                    Access::ReadOnly => "read-only",
                    Access::ReadWrite => "read-write",
                };
                let line = format!("{} ({access})", dir.guest);
                if !dirs.contains(&line) {
                    dirs.push(line);
                }
            }
            add_reach(&mut directories, &tool.name, dirs);
            let mut reached = Vec::new();
            for grant in plugin.grant.http.iter() {
                let origin = grant.origin();
                if !reached.contains(&origin) {
                    reached.push(origin);
                }
            }
            add_reach(&mut origins, &tool.name, reached);
        }
        let groups = pipeline
            .groups()
            .keys()
            .filter_map(|name| {
                let count = pipeline.group_tools(name)?.len();
                (count > 0).then(|| (name.clone(), count))
            })
            .collect();
        let skills = pipeline
            .offers()
            .skills()
            .iter()
            .map(|skill| {
                let description = pipeline.secrets().scrub(&skill.front_matter.description);
                skill_entry(&skill.qualified_name(), &description)
            })
            .collect();
        Self {
            skills,
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
        if environment.skills.is_empty() {
            prompt.push_str(" This session has no tools: answer from what you know.");
        }
        let _ = write!(prompt, " It is now {}.", environment.now);
        push_skills(&mut prompt, &environment.skills);
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
    match environment.directories.as_slice() {
        [] => {}
        [all] => {
            let _ = write!(
                prompt,
                " The tools work only in these directories (use absolute paths under them): {}.",
                all.places.join(", ")
            );
        }
        each => {
            let _ = write!(
                prompt,
                " Each tool works only in its own directories (use absolute paths under them): {}.",
                per_tool(each)
            );
        }
    }
    match environment.origins.as_slice() {
        [] => {}
        [all] => {
            let _ = write!(
                prompt,
                " They reach only these web origins: {}.",
                all.places.join(", ")
            );
        }
        each => {
            let _ = write!(
                prompt,
                " Each reaches only its own web origins: {}.",
                per_tool(each)
            );
        }
    }
    push_skills(&mut prompt, &environment.skills);
    prompt
}

/// The skills, one line each under a heading, when there are any.
fn push_skills(prompt: &mut String, skills: &[String]) {
    if !skills.is_empty() {
        prompt.push_str("\nSkills (call load_skill with a name below before a task it fits):");
        for entry in skills {
            prompt.push_str(entry);
        }
    }
}

/// `\n- NAME: "the description's first line"`, cut to fit [`MAX_SKILL_ENTRY_BYTES`]; a `"` in it
/// is written `'`, so the quotes say where each description ends.
fn skill_entry(name: &str, description: &str) -> String {
    let first_line = description
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .replace('"', "'");
    let room = MAX_SKILL_ENTRY_BYTES.saturating_sub(name.len() + 7);
    let mut entry = format!("\n- {name}: \"");
    if first_line.len() <= room {
        entry.push_str(&first_line);
    } else {
        let mut end = room.saturating_sub('…'.len_utf8());
        while !first_line.is_char_boundary(end) {
            end -= 1;
        }
        entry.push_str(&first_line[..end]);
        entry.push('…');
    }
    entry.push('"');
    entry
}

/// `read_file, list_dir: /repo (read-only); csv_query: /data (read-only)`.
fn per_tool(reaches: &[Reach]) -> String {
    reaches
        .iter()
        .map(|reach| format!("{}: {}", reach.tools.join(", "), reach.places.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment(directories: Vec<Reach>, origins: Vec<Reach>) -> Environment {
        Environment {
            now: "2026-12-07 17:00 UTC".into(),
            directories,
            origins,
            guidelines: Vec::new(),
            has_tools: true,
            groups: Vec::new(),
            skills: Vec::new(),
        }
    }

    #[test]
    fn each_skill_adds_at_most_200_bytes_to_the_prompt() {
        let without = default_prompt(&environment(Vec::new(), Vec::new()), false);
        let mut with = environment(Vec::new(), Vec::new());
        with.skills.push(skill_entry(
            &"n".repeat(64),
            &"a long description ".repeat(60),
        ));
        let one = default_prompt(&with, false);
        assert!(
            one.len() - without.len() <= 200,
            "{}",
            one.len() - without.len()
        );
        with.skills.push(skill_entry(
            "notes/house-report",
            "How \"reports\" are laid out here.\nMore.",
        ));
        let two = default_prompt(&with, false);
        assert!(two.len() - one.len() <= 200);
        assert!(
            two.ends_with("\n- notes/house-report: \"How 'reports' are laid out here.\""),
            "{two}"
        );
        // A session with no tools but a skill: still at most 200 bytes more.
        let mut bare = environment(Vec::new(), Vec::new());
        bare.has_tools = false;
        let without = default_prompt(&bare, false);
        bare.skills
            .push(skill_entry(&"n".repeat(64), &"d".repeat(900)));
        let with_one = default_prompt(&bare, false);
        assert!(with_one.len() <= without.len() + 200, "{with_one}");
        assert!(two.contains("call load_skill"), "{two}");
    }

    fn reach(tools: &[&str], places: &[&str]) -> Reach {
        Reach {
            tools: tools.iter().map(|t| t.to_string()).collect(),
            places: places.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn tools_sharing_their_grants_are_told_once_and_others_tool_by_tool() {
        let mut shared = Vec::new();
        add_reach(&mut shared, "read_file", vec!["/repo (read-only)".into()]);
        add_reach(&mut shared, "list_dir", vec!["/repo (read-only)".into()]);
        add_reach(&mut shared, "echo", Vec::new());
        assert_eq!(
            shared,
            [reach(&["read_file", "list_dir"], &["/repo (read-only)"])]
        );
        let prompt = default_prompt(&environment(shared.clone(), Vec::new()), false);
        assert!(
            prompt.contains("The tools work only in these directories (use absolute paths under them): /repo (read-only)."),
            "{prompt}"
        );

        let mut each = shared;
        add_reach(&mut each, "csv_query", vec!["/data (read-only)".into()]);
        let origins = vec![
            reach(&["http_fetch"], &["https://a.example:443"]),
            reach(&["weather"], &["https://b.example:443"]),
        ];
        let prompt = default_prompt(&environment(each, origins), false);
        assert!(
            prompt.contains("Each tool works only in its own directories (use absolute paths under them): read_file, list_dir: /repo (read-only); csv_query: /data (read-only)."),
            "{prompt}"
        );
        assert!(
            prompt.contains("Each reaches only its own web origins: http_fetch: https://a.example:443; weather: https://b.example:443."),
            "{prompt}"
        );
    }
}
