//! What `cordon serve` declares it offers: tools and logging (`logging.rs`), resources, prompts
//! and completions, each list with `listChanged` (a reload tells the clients watching it), and
//! the MCP skills extension (`io.modelcontextprotocol/skills`, without directory reads).

use super::logging;
use rmcp::model::ServerCapabilities;

/// The capabilities of every session, whatever the plugins serve at the moment (a reload may add
/// resources or skills to a server that started without any).
pub fn declared() -> ServerCapabilities {
    let mut capabilities = logging::capabilities();
    if let Some(tools) = capabilities.tools.as_mut() {
        tools.list_changed = Some(true);
    }
    let mut resources = rmcp::model::ResourcesCapability::default();
    resources.list_changed = Some(true);
    capabilities.resources = Some(resources);
    let mut prompts = rmcp::model::PromptsCapability::default();
    prompts.list_changed = Some(true);
    capabilities.prompts = Some(prompts);
    capabilities.completions = Some(Default::default());
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(rmcp::model::SKILLS_EXTENSION_ID.into(), Default::default());
    capabilities
}
