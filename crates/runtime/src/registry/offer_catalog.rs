//! What the loaded plugins serve besides tools (contract 0.4): resources, resource templates and
//! prompts, gathered into one catalog per pipeline, which routes a URI, a prompt name or a
//! template to the plugin serving it. Reading goes through the pipeline (`pipeline/offers.rs`), so
//! that secrets are masked and every read is audited.
//!
//! Names are first come, first served in plugin order: a later plugin's resource whose URI an
//! earlier plugin declares or whose template covers, its template an earlier plugin has too, or
//! its prompt of a name already taken, is left out of the catalog and named in `shadowed`; and a
//! URI is routed to the earliest plugin that serves it, declared or through a template, so no
//! later plugin can take over URIs an earlier one serves.
//!
//! Skills are in it too: the operator's own (`[skills] dirs`) first, then each plugin's, in
//! plugin order. A plugin's skills live under `skill://PLUGIN/`; one that would share a URI with a
//! skill of the operator's (a folder skill named like the plugin) is left out, so no plugin can
//! serve a file in place of one of the operator's.

use crate::registry::Registry;
use crate::sandbox::contract::offer_terms::{DeclaredPrompt, DeclaredResource, DeclaredTemplate};
use crate::sandbox::plugin::Plugin;
use crate::schema::uri_template::UriTemplate;
use crate::skills::{Skill, SkillFile};
use std::collections::HashSet;
use std::sync::Arc;

/// A resource in the catalog, with the plugin that serves it.
#[derive(Clone)]
pub struct Listed<T> {
    /// The plugin serving it.
    pub plugin: Arc<Plugin>,
    /// The plugin's place in plugin order (earlier serves first).
    pub position: usize,
    /// What the plugin declared.
    pub item: T,
}

/// Everything the pipeline's plugins serve besides tools.
#[derive(Default)]
pub struct Catalog {
    resources: Vec<Listed<DeclaredResource>>,
    templates: Vec<(Listed<DeclaredTemplate>, UriTemplate)>,
    prompts: Vec<Listed<DeclaredPrompt>>,
    skills: Vec<Skill>,
    shadowed: Vec<String>,
}

impl Catalog {
    /// The catalog of `registry`'s plugins, in their order.
    pub fn new(registry: &Registry) -> Self {
        let mut catalog = Self::default();
        let mut uris = HashSet::new();
        let mut prompt_names = HashSet::new();
        let folder_skills = registry.folder_skills();
        catalog.skills.extend(folder_skills.skills.iter().cloned());
        catalog
            .shadowed
            .extend(folder_skills.left_out.iter().cloned());
        for (position, plugin) in registry.plugins().iter().enumerate() {
            for skill in &plugin.skills {
                let clash = catalog.skills.iter().find(|earlier| {
                    skill.root.starts_with(&format!("{}/", earlier.root))
                        || earlier.root.starts_with(&format!("{}/", skill.root))
                        || earlier.root == skill.root
                });
                match clash {
                    Some(earlier) => {
                        let by = format!(
                            "its URIs are those of {} {}",
                            earlier.origin,
                            earlier.name()
                        );
                        catalog.shadow(plugin, "skill", skill.name(), &by);
                    }
                    None => catalog.skills.push(skill.clone()),
                }
            }
            for resource in &plugin.offered.resources {
                let covered = catalog.templates.iter().find(|(earlier, parsed)| {
                    earlier.position < position && parsed.matches(&resource.uri)
                });
                if let Some((earlier, _)) = covered {
                    let by = format!(
                        "under template {:?} of plugin `{}`",
                        earlier.item.uri_template, earlier.plugin.id
                    );
                    catalog.shadow(plugin, "resource", &resource.uri, &by);
                } else if uris.insert(resource.uri.clone()) {
                    catalog
                        .resources
                        .push(listed(plugin, position, resource.clone()));
                } else {
                    catalog.shadow(plugin, "resource", &resource.uri, "already served");
                }
            }
            for template in &plugin.offered.templates {
                let taken = catalog
                    .templates
                    .iter()
                    .any(|(earlier, _)| earlier.item.uri_template == template.uri_template);
                // Checked at load, so it parses.
                match UriTemplate::parse(&template.uri_template) {
                    Ok(_) if taken => catalog.shadow(
                        plugin,
                        "resource template",
                        &template.uri_template,
                        "already served",
                    ),
                    Ok(parsed) => catalog
                        .templates
                        .push((listed(plugin, position, template.clone()), parsed)),
                    Err(_) => {}
                }
            }
            for prompt in &plugin.offered.prompts {
                if prompt_names.insert(prompt.name.clone()) {
                    catalog
                        .prompts
                        .push(listed(plugin, position, prompt.clone()));
                } else {
                    catalog.shadow(plugin, "prompt", &prompt.name, "already served");
                }
            }
        }
        catalog
    }

    fn shadow(&mut self, plugin: &Plugin, kind: &str, name: &str, why: &str) {
        let message = format!(
            "plugin `{}` declares {kind} {name:?}, which an earlier plugin serves ({why}); it is left out",
            plugin.id
        );
        tracing::warn!("{message}");
        self.shadowed.push(message);
    }

    /// The resources with URIs known at load.
    pub fn resources(&self) -> &[Listed<DeclaredResource>] {
        &self.resources
    }

    /// The resource templates.
    pub fn templates(&self) -> impl Iterator<Item = &Listed<DeclaredTemplate>> {
        self.templates.iter().map(|(listed, _)| listed)
    }

    /// The prompts.
    pub fn prompts(&self) -> &[Listed<DeclaredPrompt>] {
        &self.prompts
    }

    /// Declarations left out because an earlier plugin had the name, and skills left out (a
    /// folder's that broke a rule, a plugin's whose URIs were the operator's), one sentence each.
    pub fn shadowed(&self) -> &[String] {
        &self.shadowed
    }

    /// Whether the plugins serve nothing besides tools.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
            && self.templates.is_empty()
            && self.prompts.is_empty()
            && self.skills.is_empty()
    }

    /// The skills: the operator's, then the plugins' in plugin order.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub fn skill(&self, uri: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.uri() == uri)
    }

    /// The skill named `name`: the operator's, or `PLUGIN/NAME` for a plugin's (a plugin's skill
    /// is found by its bare name too when no other skill has that name).
    pub fn skill_named(&self, name: &str) -> Option<&Skill> {
        let root = format!("{}{name}", crate::skills::SKILL_URI_PREFIX);
        if let Some(skill) = self.skills.iter().find(|skill| skill.root == root) {
            return Some(skill);
        }
        let mut named = self.skills.iter().filter(|skill| skill.name() == name);
        match (named.next(), named.next()) {
            (Some(skill), None) => Some(skill),
            _ => None,
        }
    }

    /// The skill file at `uri`, with its skill.
    pub fn skill_file(&self, uri: &str) -> Option<(&Skill, &SkillFile)> {
        self.skills
            .iter()
            .find_map(|skill| Some((skill, skill.file_at(uri)?)))
    }

    /// Whether `other` serves the same skills, file for file.
    pub fn same_skills(&self, other: &Self) -> bool {
        self.skills == other.skills
    }

    /// The plugin serving `uri` and the declared MIME type: the earliest plugin in plugin order
    /// that declares it or has a template matching it (its declaration before its templates).
    pub fn resource_owner(&self, uri: &str) -> Option<(&Arc<Plugin>, &str)> {
        let declared = self.resources.iter().find(|listed| listed.item.uri == uri);
        let templated = self
            .templates
            .iter()
            .find(|(_, parsed)| parsed.matches(uri))
            .map(|(listed, _)| listed);
        match (declared, templated) {
            (Some(declared), Some(templated)) if templated.position < declared.position => {
                Some((&templated.plugin, templated.item.mime_type.as_str()))
            }
            (Some(declared), _) => Some((&declared.plugin, declared.item.mime_type.as_str())),
            (None, Some(templated)) => Some((&templated.plugin, templated.item.mime_type.as_str())),
            (None, None) => None,
        }
    }

    /// Prompt `name`, with its plugin.
    pub fn prompt(&self, name: &str) -> Option<&Listed<DeclaredPrompt>> {
        self.prompts.iter().find(|listed| listed.item.name == name)
    }

    /// Whether `other` lists the same resources and templates, served by the same plugins (what a
    /// client that listed them must hear about when it changes).
    pub fn same_resources(&self, other: &Self) -> bool {
        same(&self.resources, &other.resources)
            && self.templates.len() == other.templates.len()
            && self
                .templates()
                .zip(other.templates())
                .all(|(a, b)| a.plugin.id == b.plugin.id && a.item == b.item)
    }

    /// Whether `other` lists the same prompts, served by the same plugins.
    pub fn same_prompts(&self, other: &Self) -> bool {
        same(&self.prompts, &other.prompts)
    }

    /// The template declared as `uri_template`, with its plugin.
    pub fn template(&self, uri_template: &str) -> Option<&Listed<DeclaredTemplate>> {
        self.templates()
            .find(|listed| listed.item.uri_template == uri_template)
    }
}

fn same<T: PartialEq>(a: &[Listed<T>], b: &[Listed<T>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(a, b)| a.plugin.id == b.plugin.id && a.item == b.item)
}

fn listed<T>(plugin: &Arc<Plugin>, position: usize, item: T) -> Listed<T> {
    Listed {
        plugin: plugin.clone(),
        position,
        item,
    }
}
