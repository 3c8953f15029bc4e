//! Benchmark baseline: the trivial `echo` tool served natively (no sandbox) by a minimal MCP server
//! over stdio, built on the same rmcp version as `cordon serve`. This is how agents usually run a
//! tool today; `make bench` drives it with the same raw JSON-RPC client as `cordon serve`.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;

struct EchoServer {
    tools: Vec<Tool>,
}

impl EchoServer {
    fn new() -> Self {
        let schema: JsonObject = serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "Text to send back." } },
            "required": ["text"],
        }))
        .expect("a literal schema");
        let echo = Tool::new("echo", "Returns the text it is given.", Arc::new(schema));
        Self { tools: vec![echo] }
    }
}

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("echo", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != "echo" {
            return Err(McpError::new(
                ErrorCode::INVALID_PARAMS,
                format!("no tool named {}", request.name),
                None,
            ));
        }
        let text = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("text"))
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| McpError::invalid_params("`text` must be a string", None))?;
        Ok(CallToolResult::success(vec![ContentBlock::text(text.to_string())]).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let running = EchoServer::new().serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
