//! What a plugin may declare beside its tools (contract 0.4), checked at load: bounded counts and
//! sizes, absolute resource URIs unique in the plugin, URI templates cordon can match, prompt and
//! argument names as clients accept them. `skill://` is the host's: skills are served by cordon
//! from what a plugin carries, so a plugin cannot declare resources there and pose as a skill.

use super::LoadError;
use crate::sandbox::contract::content;
use crate::sandbox::contract::offer_terms::Offered;
use crate::schema::uri_template::{MAX_URI_BYTES, UriTemplate, has_scheme};
use std::collections::HashSet;

/// The most resources one plugin may declare.
pub const MAX_RESOURCES: usize = 1024;
/// The most resource templates, and the most prompts, one plugin may declare.
pub const MAX_TEMPLATES: usize = 128;
pub const MAX_PROMPTS: usize = 128;
/// The most arguments one prompt may take.
const MAX_PROMPT_ARGUMENTS: usize = 32;
/// The longest name and title, description, and MIME type.
const MAX_NAME_BYTES: usize = 128;
const MAX_DESCRIPTION_BYTES: usize = 4096;
const MAX_MIME_BYTES: usize = 127;
/// The URI scheme the host serves skills under.
pub const SKILL_SCHEME: &str = "skill:";

/// Refuses a declaration that breaks a rule, naming it and the rule.
pub(super) fn check(offered: &Offered) -> Result<(), LoadError> {
    let invalid = |what: String, reason: String| Err(LoadError::InvalidOffer { what, reason });
    for (count, limit, kind) in [
        (offered.resources.len(), MAX_RESOURCES, "resources"),
        (offered.templates.len(), MAX_TEMPLATES, "resource templates"),
        (offered.prompts.len(), MAX_PROMPTS, "prompts"),
    ] {
        if count > limit {
            return invalid(
                format!("its {kind}"),
                format!("it declares {count}; a plugin may declare at most {limit}"),
            );
        }
    }
    let mut uris = HashSet::new();
    for resource in &offered.resources {
        let what = format!("resource {:?}", cut(&resource.uri));
        if let Err(reason) = check_uri(&resource.uri) {
            return invalid(what, reason);
        }
        if !uris.insert(resource.uri.as_str()) {
            return invalid(
                what,
                "it is declared twice; resource URIs must be unique".into(),
            );
        }
        if let Err(reason) = check_texts(
            &resource.name,
            &resource.title,
            &resource.description,
            &resource.mime_type,
        ) {
            return invalid(what, reason);
        }
    }
    let mut templates = HashSet::new();
    for template in &offered.templates {
        let what = format!("resource template {:?}", cut(&template.uri_template));
        let parsed = UriTemplate::parse(&template.uri_template);
        if let Err(reason) = parsed
            .and_then(|_| check_characters(&template.uri_template))
            .and_then(|_| check_not_skill(&template.uri_template))
        {
            return invalid(what, reason);
        }
        if !templates.insert(template.uri_template.as_str()) {
            return invalid(
                what,
                "it is declared twice; resource templates must be unique".into(),
            );
        }
        if let Err(reason) = check_texts(
            &template.name,
            &template.title,
            &template.description,
            &template.mime_type,
        ) {
            return invalid(what, reason);
        }
    }
    let mut names = HashSet::new();
    for prompt in &offered.prompts {
        let what = format!("prompt {:?}", cut(&prompt.name));
        if !is_name(&prompt.name) {
            return invalid(
                what,
                "a prompt's name is 1 to 64 of a-z, A-Z, 0-9, `_`, `-`".into(),
            );
        }
        if !names.insert(prompt.name.as_str()) {
            return invalid(
                what,
                "it is declared twice; prompt names must be unique".into(),
            );
        }
        if let Err(reason) = check_texts(&prompt.name, &prompt.title, &prompt.description, "") {
            return invalid(what, reason);
        }
        if prompt.arguments.len() > MAX_PROMPT_ARGUMENTS {
            return invalid(
                what,
                format!(
                    "it takes {} arguments; a prompt may take at most {MAX_PROMPT_ARGUMENTS}",
                    prompt.arguments.len()
                ),
            );
        }
        let mut arguments = HashSet::new();
        for argument in &prompt.arguments {
            if !is_name(&argument.name) || !arguments.insert(argument.name.as_str()) {
                return invalid(
                    what,
                    format!(
                        "argument {:?} is not a name of 1 to 64 of a-z, A-Z, 0-9, `_`, `-`, or is declared twice",
                        cut(&argument.name)
                    ),
                );
            }
            if argument.description.len() > MAX_DESCRIPTION_BYTES {
                return invalid(
                    what,
                    format!(
                        "argument {:?} has a description over {MAX_DESCRIPTION_BYTES} bytes",
                        argument.name
                    ),
                );
            }
        }
    }
    Ok(())
}

/// An absolute URI of bounded length, without spaces or control characters, not a skill's.
fn check_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_URI_BYTES {
        return Err(format!(
            "it is {} bytes, over the {MAX_URI_BYTES} a URI may be",
            uri.len()
        ));
    }
    if !has_scheme(uri) {
        return Err(
            "it is not an absolute URI: begin it with a scheme (`docs://`, `file:///`)".into(),
        );
    }
    check_characters(uri)?;
    check_not_skill(uri)
}

fn check_characters(uri: &str) -> Result<(), String> {
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("it holds spaces or control characters; percent-encode them".into());
    }
    Ok(())
}

fn check_not_skill(uri: &str) -> Result<(), String> {
    if uri
        .get(..SKILL_SCHEME.len())
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case(SKILL_SCHEME))
    {
        return Err("`skill://` URIs are served by cordon from a plugin's skills, not declared as resources; use another scheme".into());
    }
    Ok(())
}

fn check_texts(name: &str, title: &str, description: &str, mime_type: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(format!("its name must be 1 to {MAX_NAME_BYTES} bytes"));
    }
    if title.len() > MAX_NAME_BYTES {
        return Err(format!("its title is over {MAX_NAME_BYTES} bytes"));
    }
    if description.len() > MAX_DESCRIPTION_BYTES {
        return Err(format!(
            "its description is over {MAX_DESCRIPTION_BYTES} bytes"
        ));
    }
    if !mime_type.is_empty() && !content::is_media_type_with_parameters(mime_type) {
        return Err(format!(
            "its MIME type {:?} is not `type/subtype` (at most {MAX_MIME_BYTES} bytes)",
            cut(mime_type)
        ));
    }
    Ok(())
}

/// A prompt's or argument's name.
fn is_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// At most 80 bytes of `text`, for messages.
pub(super) fn cut(text: &str) -> &str {
    let mut end = text.len().min(80);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::sandbox::contract::offer_terms::{
        DeclaredPrompt, DeclaredResource, DeclaredTemplate, Offered, PromptArgument,
    };

    fn resource(uri: &str) -> DeclaredResource {
        DeclaredResource {
            uri: uri.into(),
            name: "r".into(),
            title: String::new(),
            description: String::new(),
            mime_type: String::new(),
            size: None,
        }
    }

    fn refusal(offered: Offered) -> String {
        check(&offered).unwrap_err().to_string()
    }

    #[test]
    fn resources_need_unique_absolute_uris_outside_skill() {
        assert!(
            check(&Offered {
                resources: vec![resource("docs://a")],
                ..Default::default()
            })
            .is_ok()
        );
        for (uri, says) in [
            ("guide", "not an absolute URI"),
            ("docs://a b", "spaces"),
            ("skill://x/SKILL.md", "served by cordon"),
            ("SKILL://x/SKILL.md", "served by cordon"),
        ] {
            let said = refusal(Offered {
                resources: vec![resource(uri)],
                ..Default::default()
            });
            assert!(said.contains(says), "{uri}: {said}");
        }
        let twice = refusal(Offered {
            resources: vec![resource("docs://a"), resource("docs://a")],
            ..Default::default()
        });
        assert!(twice.contains("declared twice"), "{twice}");
        let mut typed = resource("docs://a");
        typed.mime_type = "markdown".into();
        let said = refusal(Offered {
            resources: vec![typed],
            ..Default::default()
        });
        assert!(said.contains("not `type/subtype`"), "{said}");
    }

    #[test]
    fn templates_and_prompts_are_checked() {
        let template = |uri_template: &str| DeclaredTemplate {
            uri_template: uri_template.into(),
            name: "t".into(),
            title: String::new(),
            description: String::new(),
            mime_type: String::new(),
        };
        let said = refusal(Offered {
            templates: vec![template("notes://{a}{b}")],
            ..Default::default()
        });
        assert!(said.contains("follows another expression"), "{said}");
        let said = refusal(Offered {
            templates: vec![template("skill://{name}/SKILL.md")],
            ..Default::default()
        });
        assert!(said.contains("served by cordon"), "{said}");

        let prompt = |name: &str, arguments: &[&str]| DeclaredPrompt {
            name: name.into(),
            title: String::new(),
            description: String::new(),
            arguments: arguments
                .iter()
                .map(|name| PromptArgument {
                    name: name.to_string(),
                    description: String::new(),
                    required: true,
                })
                .collect(),
        };
        assert!(
            check(&Offered {
                prompts: vec![prompt("review", &["file"])],
                ..Default::default()
            })
            .is_ok()
        );
        let said = refusal(Offered {
            prompts: vec![prompt("re view", &[])],
            ..Default::default()
        });
        assert!(said.contains("a prompt's name is"), "{said}");
        let said = refusal(Offered {
            prompts: vec![prompt("review", &["a", "a"])],
            ..Default::default()
        });
        assert!(said.contains("declared twice"), "{said}");
    }
}
