//! How `cordon list` prints what plugins serve besides tools (contract 0.4): resources, resource
//! templates, prompts and skills, each with its plugin (a skill of the operator's, its folder), readable or as JSON. Every text a plugin supplied
//! goes through the terminal sanitiser, as in `render.rs`.

use cordon_runtime::pipeline::Pipeline;
use cordon_runtime::report::terminal_text::one_line;
use cordon_runtime::skills::SkillOrigin;
use serde_json::{Value, json};

/// The `resources`, `resourceTemplates` and `prompts` fields of `cordon list --json`.
pub fn offers_json(pipeline: &Pipeline) -> [(&'static str, Value); 5] {
    let offers = pipeline.offers();
    let with_plugin = |plugin: &str, item: Value| {
        let mut item = item;
        item["plugin"] = plugin.into();
        item
    };
    [
        (
            "resources",
            offers
                .resources()
                .iter()
                .map(|l| with_plugin(&l.plugin.id, json!(l.item)))
                .collect(),
        ),
        (
            "resourceTemplates",
            offers
                .templates()
                .map(|l| with_plugin(&l.plugin.id, json!(l.item)))
                .collect(),
        ),
        (
            "prompts",
            offers
                .prompts()
                .iter()
                .map(|l| with_plugin(&l.plugin.id, json!(l.item)))
                .collect(),
        ),
        (
            "skills",
            offers
                .skills()
                .iter()
                .map(|skill| {
                    json!({
                        "uri": skill.uri(),
                        "name": skill.name(),
                        "description": skill.front_matter.description,
                        "plugin": match &skill.origin {
                            SkillOrigin::Plugin(plugin) => Value::from(&**plugin),
                            SkillOrigin::Folder(_) => Value::Null,
                        },
                        "files": skill.files.iter().map(|file| json!({
                            "path": file.path,
                            "size": file.bytes.len(),
                            "digest": file.digest,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        ),
        ("offersShadowed", json!(offers.shadowed())),
    ]
}

/// The readable sections, empty when plugins serve nothing besides tools.
pub fn offers_text(pipeline: &Pipeline) -> String {
    let offers = pipeline.offers();
    let mut out = String::new();
    let resources = offers.resources();
    if !resources.is_empty() {
        out.push_str(&format!("Resources ({}):\n", resources.len()));
        for listed in resources {
            let resource = &listed.item;
            out.push_str(&format!(
                "  {}  [{}] {}{}\n",
                one_line(&resource.uri),
                one_line(&listed.plugin.id),
                one_line(label(&resource.title, &resource.name)),
                described(&resource.description),
            ));
        }
    }
    let templates: Vec<_> = offers.templates().collect();
    if !templates.is_empty() {
        out.push_str(&format!("Resource templates ({}):\n", templates.len()));
        for listed in templates {
            let template = &listed.item;
            out.push_str(&format!(
                "  {}  [{}] {}{}\n",
                one_line(&template.uri_template),
                one_line(&listed.plugin.id),
                one_line(label(&template.title, &template.name)),
                described(&template.description),
            ));
        }
    }
    let prompts = offers.prompts();
    if !prompts.is_empty() {
        out.push_str(&format!("Prompts ({}):\n", prompts.len()));
        for listed in prompts {
            let prompt = &listed.item;
            let arguments: Vec<String> = prompt
                .arguments
                .iter()
                .map(|argument| {
                    let optional = if argument.required { "" } else { "?" };
                    format!("{}{optional}", one_line(&argument.name))
                })
                .collect();
            out.push_str(&format!(
                "  {}({})  [{}]{}\n",
                one_line(&prompt.name),
                arguments.join(", "),
                one_line(&listed.plugin.id),
                described(&prompt.description),
            ));
        }
    }
    let skills = offers.skills();
    if !skills.is_empty() {
        out.push_str(&format!("Skills ({}):\n", skills.len()));
        for skill in skills {
            let origin = match &skill.origin {
                SkillOrigin::Plugin(plugin) => one_line(plugin).into_owned(),
                SkillOrigin::Folder(dir) => one_line(&dir.display().to_string()).into_owned(),
            };
            out.push_str(&format!(
                "  {}  [{origin}] {} files{}\n",
                one_line(&skill.uri()),
                skill.files.len(),
                described(&skill.front_matter.description),
            ));
        }
    }
    for shadowed in offers.shadowed() {
        out.push_str(&format!("  note: {}\n", one_line(shadowed)));
    }
    out
}

fn label<'a>(title: &'a str, name: &'a str) -> &'a str {
    if title.is_empty() { name } else { title }
}

/// `: the description's first line`, or nothing.
fn described(description: &str) -> String {
    match description.lines().next() {
        Some(line) if !line.is_empty() => format!(": {}", one_line(line)),
        _ => String::new(),
    }
}
