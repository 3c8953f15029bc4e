//! The MCP skills extension (`io.modelcontextprotocol/skills`): `skills/list` and `skills/get`,
//! answered from the pipeline's catalog (the operator's skill folders and what plugins carry).
//! Each entry has the front matter as written and every file with its sha256 and size; the files
//! are read with `resources/read` (`offers.rs`). Each skill's `SKILL.md` is also listed by
//! `resources/list`, named and described by its front matter, for clients without the extension.

use super::tool_pages;
use cordon_runtime::pipeline::Pipeline;
use cordon_runtime::skills::{Skill, SkillOrigin};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetSkillResult, ListSkillsResult, Resource, SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::{Value, json};

/// One page of the skills, by `SKILL.md` URI; a skill is never split across pages.
pub fn list(
    pipeline: &Pipeline,
    cursor: Option<&str>,
    size: usize,
) -> Result<ListSkillsResult, McpError> {
    let mut all: Vec<rmcp::model::Skill> = pipeline
        .offers()
        .skills()
        .iter()
        .map(|skill| entry(pipeline, skill))
        .collect();
    all.sort_by(|a, b| a.uri.cmp(&b.uri));
    let (page, next) = tool_pages::page_by(&all, |skill| &skill.uri, cursor, size)
        .map_err(|err| McpError::invalid_params(err.to_string(), None))?;
    let mut result = ListSkillsResult::with_all_items(page);
    result.next_cursor = next;
    Ok(result)
}

/// `skills/get`: the skill whose `SKILL.md` is at `uri`; `-32602` for a URI no skill has.
pub fn get(pipeline: &Pipeline, uri: &str) -> Result<GetSkillResult, McpError> {
    match pipeline.offers().skill(uri) {
        Some(skill) => Ok(GetSkillResult::new(entry(pipeline, skill))),
        None => Err(McpError::invalid_params(
            format!(
                "no skill's SKILL.md is at {:?}; skills/list says which skills are served",
                pipeline.secrets().scrub(uri)
            ),
            Some(json!({ "uri": pipeline.secrets().scrub(uri) })),
        )),
    }
}

/// The `SKILL.md` of each skill as a resource.
pub fn skill_resources(pipeline: &Pipeline) -> impl Iterator<Item = Resource> + '_ {
    pipeline.offers().skills().iter().map(|skill| {
        let mut resource = Resource::new(skill.uri(), skill.name());
        let description = pipeline.secrets().scrub(&skill.front_matter.description);
        resource.description = Some(description.into_owned());
        resource.mime_type = Some("text/markdown".into());
        resource.size = Some(skill.files[0].bytes.len() as u64);
        resource
    })
}

/// The skill as the extension lists it, configured secrets in its front matter masked (as they
/// are in its files when read).
fn entry(pipeline: &Pipeline, skill: &Skill) -> rmcp::model::Skill {
    let mut fields = Value::Object(skill.front_matter.fields.clone());
    pipeline.secrets().scrub_json(&mut fields);
    let Value::Object(mut fields) = fields else {
        unreachable!("masking keeps an object an object")
    };
    let text = |fields: &serde_json::Map<String, Value>, key: &str| {
        fields
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut front_matter =
        SkillFrontmatter::new(text(&fields, "name"), text(&fields, "description"));
    fields.remove("name");
    fields.remove("description");
    for (key, value) in fields {
        front_matter = front_matter.with_field(key, value);
    }
    let files = skill
        .files
        .iter()
        .map(|file| {
            SkillResource::new(
                skill.file_uri(&file.path),
                &file.digest,
                file.bytes.len() as u64,
            )
        })
        .collect();
    let entry = rmcp::model::Skill::new(skill.uri(), front_matter, SkillResources::Files(files));
    // Which plugin carries it (the operator's own skills say nothing of where they are on disk).
    match &skill.origin {
        SkillOrigin::Plugin(plugin) => {
            let mut meta = rmcp::model::MetaObject::new();
            meta.insert(
                "dev.cordon/plugin".into(),
                Value::String(plugin.to_string()),
            );
            entry.with_meta(meta)
        }
        SkillOrigin::Folder(_) => entry,
    }
}
