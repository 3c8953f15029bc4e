//! The OpenTelemetry names cordon's spans and metrics use, in one place: the GenAI and MCP
//! semantic conventions as published in semantic-conventions v1.41 (their last release in the main
//! repository; both moved to `semantic-conventions-genai` afterwards), plus cordon's own
//! `cordon.*` names where the conventions have none.
//!
//! The host's libraries write their spans with `tracing` (target [`SPAN_TARGET`]), using these
//! names as field names; `tracing-opentelemetry` turns the fields into attributes, and `otel.name`,
//! `otel.kind` and `otel.status_code` into the span's name, kind and status.

/// The `tracing` target every span meant for export carries (nothing else is exported, and the
/// log output never shows these spans).
pub const SPAN_TARGET: &str = "cordon_otel";

/// The schema the attribute names follow.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

/// The instrumentation scope of every span and metric.
pub const SCOPE: &str = "cordon";

/// Span names as `tracing` knows them (`otel.name` gives the exported name).
pub mod spans {
    /// A turn of the agent loop: `invoke_agent` (INTERNAL).
    pub const INVOKE_AGENT: &str = "invoke_agent";
    /// A model request: `chat {model}` (CLIENT).
    pub const CHAT: &str = "chat";
    /// A batch of tool calls run together (INTERNAL): `cordon.batch`.
    pub const BATCH: &str = "batch";
    /// One tool call: `execute_tool {tool}` (INTERNAL).
    pub const EXECUTE_TOOL: &str = "execute_tool";
    /// One hook's decision on a call: `hook {id}` (INTERNAL).
    pub const HOOK: &str = "hook";
    /// A compaction of the conversation (INTERNAL).
    pub const COMPACTION: &str = "compaction";
    /// One MCP request handled by `cordon serve`: `{mcp.method.name} {target}` (SERVER).
    pub const MCP_REQUEST: &str = "mcp_request";
}

/// Attribute names.
pub mod attributes {
    pub const OPERATION_NAME: &str = "gen_ai.operation.name";
    pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
    pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    pub const TOKEN_TYPE: &str = "gen_ai.token.type";
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
    pub const ERROR_TYPE: &str = "error.type";
    pub const SERVER_ADDRESS: &str = "server.address";
    pub const SERVER_PORT: &str = "server.port";
    pub const MCP_METHOD_NAME: &str = "mcp.method.name";
    pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
    pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    pub const PLUGIN: &str = "cordon.plugin";
    pub const HOOK_ID: &str = "cordon.hook.id";
    pub const HOOK_STAGE: &str = "cordon.hook.stage";
    pub const HOOK_DECISION: &str = "cordon.hook.decision";
    pub const BATCH_CALLS: &str = "cordon.batch.calls";
    /// cordon's error kind of an MCP call whose `error.type` is `tool_error`.
    pub const CORDON_ERROR_KIND: &str = "cordon.error.kind";
}

/// Metric names (all histograms but the counter of calls).
pub mod metrics {
    /// Tool calls by tool and outcome (`ok` or the error kind): a counter.
    pub const TOOL_CALLS: &str = "cordon.tool.calls";
    /// How long tool calls took, by tool and outcome, in seconds.
    pub const TOOL_DURATION: &str = "cordon.tool.duration";
    /// Tokens a model request took, by `gen_ai.token.type` (input, output).
    pub const TOKEN_USAGE: &str = "gen_ai.client.token.usage";
    /// How long a model request took, in seconds.
    pub const OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
    /// How long `cordon serve` took to answer an MCP request, in seconds.
    pub const MCP_OPERATION_DURATION: &str = "mcp.server.operation.duration";
    /// Sandboxes running now (an observable gauge).
    pub const SANDBOXES_IN_USE: &str = "cordon.sandboxes.in_use";

    /// The conventions' bucket boundaries.
    pub const TOKEN_BUCKETS: &[f64] = &[
        1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0,
        4194304.0, 16777216.0, 67108864.0,
    ];
    pub const GEN_AI_DURATION_BUCKETS: &[f64] = &[
        0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ];
    pub const MCP_DURATION_BUCKETS: &[f64] = &[
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    /// Tool calls run from microseconds to minutes.
    pub const TOOL_DURATION_BUCKETS: &[f64] = &[
        0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0,
    ];
}
