//! MCP over stdin/stdout: protocol messages only on stdout, logs on stderr; stdin and stdout are
//! set non-blocking where they are pipes (pipes.rs).

use crate::server::McpServer;
use rmcp::ServiceExt;

/// Why an MCP session over stdio ended other than by the client closing stdin.
#[derive(Debug, thiserror::Error)]
pub enum StdioServeError {
    #[error("the MCP session could not start: {0}")]
    Initialize(#[source] Box<rmcp::service::ServerInitializeError>),
    #[error("the MCP session ended abnormally: {0}")]
    Ended(#[from] tokio::task::JoinError),
}

impl McpServer {
    /// Speaks MCP on stdin/stdout until the client closes stdin. Only protocol messages go to
    /// stdout; logs go to stderr.
    pub async fn serve_stdio(self) -> Result<(), StdioServeError> {
        let running = match super::pipes::non_blocking_stdio() {
            Some(streams) => self.serve(streams).await,
            None => self.serve(rmcp::transport::stdio()).await,
        }
        .map_err(|err| StdioServeError::Initialize(Box::new(err)))?;
        let reason = running.waiting().await?;
        tracing::info!(?reason, "MCP stdio session ended");
        Ok(())
    }
}
