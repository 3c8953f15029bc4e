//! Intent routing (`[agent.routing] mode = "model"`): before a turn's tool loop, one short request
//! with no tools asks a model to answer with one word, `none`, `all` or the name of a tool group.
//! `none` sends the prompt with no tools at all, so chit-chat gets a plain answer, costs fewer
//! tokens and cannot call a tool by mistake; a group offers only its tools; anything else, and a
//! failed routing request, offers the tools as without routing, so routing never loses a tool.

use super::*;
use crate::conversation::message::Message;
use crate::conversation::observer::Unobserved;
use crate::model::client::read_whole;

pub use crate::conversation::observer::Route;

/// Whether turns are routed, and by which model.
#[derive(Default)]
pub enum Routing {
    /// No routing: every turn offers the tools as configured.
    #[default]
    Off,
    /// The session's own model routes.
    SessionModel,
    /// This (smaller, or other) model routes.
    Model(Box<ModelClient>),
}

/// The most tokens the routing reply may take: one word, with room for a stray space or dot.
const ROUTE_REPLY_TOKENS: u32 = 8;

/// The routing request's system prompt for these groups (name and members).
pub fn routing_prompt(groups: &[(String, Vec<String>)]) -> String {
    let mut prompt = String::from(
        "Decide which tools the user's next request needs. Answer with exactly one word:\n\
         none - no tool: greetings, small talk, arithmetic, general knowledge\n\
         all - it needs files, commands or other tools, or you are not sure\n",
    );
    for (name, members) in groups {
        prompt.push_str(&format!(
            "{name} - it needs only these tools: {}\n",
            members.join(", ")
        ));
    }
    prompt.push_str(
        "Examples: \"Hello!\" -> none. \"What is 7 plus 5?\" -> none. \"List the files in /data\" -> all.\n\
         Answer with the word only.",
    );
    prompt
}

/// The route a reply names: its first word, lower-cased, stripped of punctuation, if it is
/// `none`, `all` or one of `groups`.
pub fn route_of(reply: &str, groups: &[(String, Vec<String>)]) -> Option<String> {
    let word: String = reply
        .split_whitespace()
        .next()?
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .to_lowercase();
    if word == "none" || word == "all" {
        return Some(word);
    }
    groups
        .iter()
        .find(|(name, _)| name.to_lowercase() == word)
        .map(|(name, _)| name.clone())
}

impl Agent {
    /// Routes this turn's `prompt`, narrowing the turn's tools (unless a `prompt` hook already
    /// did: a hook's route stands). `None` when routing is off.
    pub(super) async fn route(
        &mut self,
        prompt: &UserText,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<Option<Route>, AgentError> {
        if matches!(self.options.routing, Routing::Off) || self.turn_tools.is_some() {
            return Ok(None);
        }
        let groups: Vec<(String, Vec<String>)> = self
            .pipeline
            .groups()
            .keys()
            .filter_map(|name| Some((name.clone(), self.pipeline.group_tools(name)?)))
            .filter(|(_, members)| !members.is_empty())
            .collect();
        let mut messages = vec![
            Message::System {
                content: routing_prompt(&groups),
            },
            Message::User {
                content: prompt.clone(),
            },
        ];
        // What the routing request sends is a model request like any other to the hooks.
        self.side_request_stage("routing", &mut messages, observer, cancel)
            .await?;
        let client = match &self.options.routing {
            Routing::Model(client) => &**client,
            _ => &self.client,
        };
        let reply = client
            .complete(
                &messages,
                &[],
                Some(ROUTE_REPLY_TOKENS),
                &Unobserved,
                &read_whole,
                cancel,
            )
            .await;
        let route = match reply {
            Ok(reply) => {
                tally.count(reply.usage);
                match route_of(&reply.text, &groups) {
                    Some(route) => Route {
                        route,
                        usage: reply.usage,
                        fallback: None,
                    },
                    None => Route {
                        route: "all".into(),
                        usage: reply.usage,
                        fallback: Some(format!(
                            "the routing reply {:?} names no route",
                            reply.text.chars().take(40).collect::<String>()
                        )),
                    },
                }
            }
            Err(ModelError::Cancelled) => return Err(AgentError::Cancelled),
            Err(err) => {
                tally.requests += 1;
                Route {
                    route: "all".into(),
                    usage: None,
                    fallback: Some(format!("the routing request failed: {err}")),
                }
            }
        };
        self.turn_tools = match route.route.as_str() {
            "all" => None,
            "none" => Some(Vec::new()),
            group => Some(vec![group.to_string()]),
        };
        observer.routed(&route);
        Ok(Some(route))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_names_a_route_by_its_first_word_and_nothing_else_does() {
        let groups = vec![("files".to_string(), vec!["read_file".to_string()])];
        assert_eq!(route_of("none", &groups).as_deref(), Some("none"));
        assert_eq!(route_of(" None.", &groups).as_deref(), Some("none"));
        assert_eq!(route_of("ALL", &groups).as_deref(), Some("all"));
        assert_eq!(route_of("Files\n", &groups).as_deref(), Some("files"));
        assert_eq!(route_of("multiply", &groups), None);
        assert_eq!(route_of("", &groups), None);
        assert_eq!(route_of("I think none", &groups), None);
    }

    #[test]
    fn the_prompt_lists_every_group_and_asks_for_one_word() {
        let prompt = routing_prompt(&[(
            "files".to_string(),
            vec!["read_file".to_string(), "list_dir".to_string()],
        )]);
        assert!(prompt.contains("files - it needs only these tools: read_file, list_dir"));
        assert!(prompt.contains("none - ") && prompt.contains("all - "));
        assert!(prompt.len() < 600, "{} bytes", prompt.len());
    }
}
