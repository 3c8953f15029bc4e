//! What the loaded plugins serve besides tools (contract 0.4): resources, resource templates and
//! prompts, gathered into one catalog per pipeline, which routes a URI, a prompt name or a
//! template to the plugin serving it. Reading goes through the pipeline (`pipeline/offers.rs`), so
//! that secrets are masked and every read is audited.
//!
//! Names are first come, first served in plugin order: a second plugin declaring a resource URI
//! or a prompt name already taken is left out of the catalog and named in `shadowed`.

use crate::registry::Registry;
use crate::sandbox::contract::offer_terms::{DeclaredPrompt, DeclaredResource, DeclaredTemplate};
use crate::sandbox::plugin::Plugin;
use crate::schema::uri_template::UriTemplate;
use std::collections::HashSet;
use std::sync::Arc;

/// A resource in the catalog, with the plugin that serves it.
#[derive(Clone)]
pub struct Listed<T> {
    /// The plugin serving it.
    pub plugin: Arc<Plugin>,
    /// What the plugin declared.
    pub item: T,
}

/// Everything the pipeline's plugins serve besides tools.
#[derive(Default)]
pub struct Catalog {
    resources: Vec<Listed<DeclaredResource>>,
    templates: Vec<(Listed<DeclaredTemplate>, UriTemplate)>,
    prompts: Vec<Listed<DeclaredPrompt>>,
    shadowed: Vec<String>,
}

impl Catalog {
    /// The catalog of `registry`'s plugins, in their order.
    pub fn new(registry: &Registry) -> Self {
        let mut catalog = Self::default();
        let mut uris = HashSet::new();
        let mut prompt_names = HashSet::new();
        for plugin in registry.plugins() {
            for resource in &plugin.offered.resources {
                if uris.insert(resource.uri.clone()) {
                    catalog.resources.push(Listed {
                        plugin: plugin.clone(),
                        item: resource.clone(),
                    });
                } else {
                    catalog.shadow(plugin, "resource", &resource.uri);
                }
            }
            for template in &plugin.offered.templates {
                // Checked at load, so it parses.
                if let Ok(parsed) = UriTemplate::parse(&template.uri_template) {
                    catalog.templates.push((
                        Listed {
                            plugin: plugin.clone(),
                            item: template.clone(),
                        },
                        parsed,
                    ));
                }
            }
            for prompt in &plugin.offered.prompts {
                if prompt_names.insert(prompt.name.clone()) {
                    catalog.prompts.push(Listed {
                        plugin: plugin.clone(),
                        item: prompt.clone(),
                    });
                } else {
                    catalog.shadow(plugin, "prompt", &prompt.name);
                }
            }
        }
        catalog
    }

    fn shadow(&mut self, plugin: &Plugin, kind: &str, name: &str) {
        let message = format!(
            "plugin `{}` declares {kind} {name:?}, which an earlier plugin already serves; it is left out",
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

    /// Declarations left out because an earlier plugin had the name, one sentence each.
    pub fn shadowed(&self) -> &[String] {
        &self.shadowed
    }

    /// Whether the plugins serve nothing besides tools.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty() && self.prompts.is_empty()
    }

    /// The plugin serving `uri` and the declared MIME type: a declared resource first, then the
    /// first template that matches.
    pub fn resource_owner(&self, uri: &str) -> Option<(&Arc<Plugin>, &str)> {
        if let Some(listed) = self.resources.iter().find(|listed| listed.item.uri == uri) {
            return Some((&listed.plugin, &listed.item.mime_type));
        }
        self.templates
            .iter()
            .find(|(_, parsed)| parsed.matches(uri))
            .map(|(listed, _)| (&listed.plugin, listed.item.mime_type.as_str()))
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
