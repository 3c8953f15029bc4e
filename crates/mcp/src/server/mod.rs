//! The MCP server: every active tool of the pipeline offered to any MCP client, over stdio or
//! streamable HTTP (`transport/`). `tools/call` runs through the same pipeline as every other front
//! end, so validation, hooks, grants, limits and error results are identical; the error kind and the
//! tool's details travel in `_meta`, never in the text the model reads (`results.rs`); a call that
//! needs a person's approval is put to the client's user (`approval.rs`); every answered call is
//! counted and timed for `/metrics` (`crate::metrics`). `tools/list` comes in pages
//! (`tool_pages.rs`); with `--tool-search` it offers only `search_tools` (`tool_search.rs`); with
//! `--hooks-as-tools` each granted hook is a tool too (`hook_tools.rs`). Resources, templates and
//! prompts that plugins serve (contract 0.4) are listed, read and filled in by `offers.rs`. The
//! served tools can be replaced while serving (`served_set.rs`), and clients that watch the list
//! are told (`list_watchers.rs`).

mod approval;
mod approval_state;
mod capabilities;
mod hook_answer_formats;
mod hook_tool_question;
mod hook_tools;
pub(crate) mod in_flight_calls;
mod list_watchers;
mod logging;
mod notifications;
mod offers;
mod request_span;
pub mod results;
mod served_set;
mod skills;
mod tool_pages;
mod tool_search;

pub use tool_pages::DEFAULT_PAGE_SIZE;

use crate::metrics::Metrics;
use cordon_runtime::pipeline::{Approver, BatchOptions, CallRequest, Pipeline};
use logging::LogThreshold;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::sync::Arc;
use tracing::Instrument as _;

/// How long a call's response waits for its progress and log notifications to be sent.
const NOTIFICATION_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The server's name in `serverInfo`.
const SERVER_NAME: &str = "cordon";

/// Serves `pipeline` as an MCP server. Cheap to clone (one per HTTP request in stateless mode).
#[derive(Clone)]
pub struct McpServer {
    /// The tools served now; a reload swaps it (`served_set.rs`).
    served: served_set::LiveSet,
    /// `--tool-search`, kept for the sets a reload makes.
    tool_search: bool,
    /// `--hooks-as-tools`, kept for the sets a reload makes.
    hooks_as_tools: bool,
    /// The clients to tell when the tool list changes.
    watchers: list_watchers::ListWatchers,
    /// The least severe tool log level forwarded as `notifications/message` (`logging/setLevel`;
    /// shared by all clients of one server).
    log_level: LogThreshold,
    /// Decides every approval instead of the client's user (`cordon serve --yes`).
    approver: Option<Arc<dyn Approver>>,
    /// The calls being served over HTTP, for cancellations that arrive as requests of their own
    /// (and for shutdown, which cancels those still running after its grace period).
    in_flight: in_flight_calls::InFlightCalls,
    /// Calls answered, by tool and outcome, and how long they took.
    metrics: Metrics,
    /// The approval states this process issued (2026-07-28 rounds), under its own key.
    approval_states: Arc<approval_state::ApprovalStates>,
    /// Tools per `tools/list` page.
    page_size: usize,
    /// How long a client may keep a `tools/list` result (a hint for clients that cache it).
    list_ttl_ms: Option<u64>,
}

impl McpServer {
    pub fn new(pipeline: Pipeline) -> Self {
        let approval_states = Arc::new(approval_state::ApprovalStates::new(
            pipeline.approval_policy().answer_within,
        ));
        Self {
            served: served_set::LiveSet::new(served_set::ServedSet::new(pipeline, false, false)),
            tool_search: false,
            hooks_as_tools: false,
            watchers: Default::default(),
            list_ttl_ms: None,
            page_size: DEFAULT_PAGE_SIZE as usize,
            log_level: LogThreshold::default(),
            approver: None,
            in_flight: Default::default(),
            metrics: Metrics::default(),
            approval_states,
        }
    }

    /// The counters and histograms `/metrics` reports.
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The host's scrubber, as the pipeline served now has it.
    pub(crate) fn secrets(&self) -> cordon_runtime::report::secrets::Secrets {
        self.served.current().pipeline.secrets().clone()
    }

    /// Sandboxes running now, and how many may run at once.
    pub(crate) fn sandboxes(&self) -> (usize, usize) {
        let served = self.served.current();
        let registry = served.pipeline.registry();
        (registry.sandboxes_in_use(), registry.max_sandboxes())
    }

    /// Serves `pipeline`'s tools from now on (calls in flight finish on the set they started
    /// with) and tells the clients that watch the list; returns what changed.
    pub async fn replace_pipeline(
        &self,
        pipeline: Pipeline,
    ) -> cordon_runtime::pipeline::ToolChanges {
        let before = self.served.current().pipeline.clone();
        let after = pipeline.clone();
        let changes = self.served.replace(served_set::ServedSet::new(
            pipeline,
            self.tool_search,
            self.hooks_as_tools,
        ));
        if !changes.is_empty() {
            let told = self.watchers.tools_changed().await;
            tracing::debug!(told, "told the clients watching the tool list");
        }
        self.watchers
            .offers_changed(before.offers(), after.offers())
            .await;
        changes
    }

    /// Counts a reload in `/metrics` (`cordon_reloads_total`): applied, or refused.
    pub fn count_reload(&self, applied: bool) {
        self.metrics.record_reload(applied);
    }

    /// The pipeline serving now.
    pub fn pipeline(&self) -> Pipeline {
        self.served.current().pipeline.clone()
    }

    /// Hints clients that cache `tools/list` to list again after `ms` milliseconds (set when the
    /// served tools may change, so clients without a change stream still see new tools).
    pub fn with_list_ttl_ms(mut self, ms: u64) -> Self {
        self.list_ttl_ms = Some(ms);
        self
    }

    /// `tools/call`, inside its request's span: routed by the served set's table
    /// ([`served_set::ServedSet::route`]), and every route's outcome counted and recorded on the
    /// span in one place.
    async fn run_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let started = std::time::Instant::now();
        // The set this call runs on, from start to end, whatever a reload does meanwhile.
        let served = self.served.current();
        let tool = request.name.to_string();
        let (response, outcome) = match served.route(&tool) {
            served_set::Route::Search => {
                let arguments = request.arguments.map(serde_json::Value::Object);
                let result =
                    tool_search::answer(&served.pipeline, &served.tools, arguments.as_ref());
                (result.into(), "ok")
            }
            served_set::Route::Hook(hook) => {
                let result = hook_tools::answer(
                    &served.pipeline,
                    &hook,
                    &context.id.to_string(),
                    request.arguments,
                    &context.ct,
                )
                .await;
                // A question the hook could not be asked is the client's mistake.
                let outcome = if result.is_error == Some(true) {
                    "invalid_arguments"
                } else {
                    "ok"
                };
                (result.into(), outcome)
            }
            served_set::Route::Plugin => self.call_plugin(&served, request, context).await,
        };
        self.metrics
            .record_call(served.metric_label(&tool), outcome, started.elapsed());
        request_span::record_outcome(&tracing::Span::current(), outcome);
        Ok(response)
    }

    /// A call through the pipeline: its response (the approval question instead of the result
    /// when this round stopped at one) and its outcome (`ok`, `input_required` or an error kind).
    async fn call_plugin(
        &self,
        served: &served_set::ServedSet,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> (CallToolResponse, &'static str) {
        let asking = self.asking(&context, &request);
        let arguments = request
            .arguments
            .map(|object| serde_json::Value::Object(object).to_string())
            .unwrap_or_default();
        let call = CallRequest::new(context.id.to_string(), request.name.to_string(), arguments);
        // Over HTTP a cancellation may arrive as a request of its own (in_flight_calls.rs).
        let cancel = context.ct.child_token();
        let _registered = context
            .extensions
            .get::<axum::http::request::Parts>()
            .map(|parts| {
                let credentials = in_flight_calls::credentials(&parts.headers);
                self.in_flight
                    .register(credentials, &context.id.to_string(), cancel.clone())
            });
        let token = context.meta.get_progress_token();
        let log_level = self.log_level.for_request(&context.meta);
        let result = if token.is_none() && !log_level.enabled() {
            // Nothing to stream: no forwarding task.
            let options = BatchOptions {
                cancel,
                events: None,
                approver: asking.approver(),
            };
            served.pipeline.call(call, &options).await
        } else {
            let reviewed = served.pipeline.results_reviewed(&request.name);
            let (sink, sending) = notifications::forwarder(
                context.peer.clone(),
                token,
                log_level,
                reviewed,
                served.pipeline.secrets().clone(),
            );
            let options = BatchOptions {
                cancel,
                events: Some(sink),
                approver: asking.approver(),
            };
            let result = served.pipeline.call(call, &options).await;
            // Notifications go out before the response: once every sender is gone the task
            // drains.
            drop(options);
            let _ = tokio::time::timeout(NOTIFICATION_DRAIN, sending).await;
            result
        };
        match asking.input_required() {
            Some(question) => (question.into(), "input_required"),
            None => {
                let outcome = result.error_kind.map_or("ok", |kind| kind.as_str());
                (results::call_tool_result(result).into(), outcome)
            }
        }
    }

    /// The calls being served over HTTP (the transport routes cancellations to them).
    pub(crate) fn in_flight_calls(&self) -> in_flight_calls::InFlightCalls {
        self.in_flight.clone()
    }

    /// Lists at most `size` tools per `tools/list` page.
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = size.max(1);
        self
    }

    /// Lists only `search_tools`, which finds the active tools by what they do (for clients with
    /// no tool search of their own); every active tool stays callable by name.
    pub fn with_tool_search(mut self) -> Self {
        self.tool_search = true;
        self.renew_set();
        self
    }

    /// Offers every granted hook as a tool of its own, `hook_ID`, that answers what the hook
    /// decides at a stage (`hook_tools.rs`).
    pub fn with_hooks_as_tools(mut self) -> Self {
        self.hooks_as_tools = true;
        self.renew_set();
        self
    }

    /// The served set made again from the current pipeline, with the current options.
    fn renew_set(&mut self) {
        let pipeline = self.served.current().pipeline.clone();
        self.served = served_set::LiveSet::new(served_set::ServedSet::new(
            pipeline,
            self.tool_search,
            self.hooks_as_tools,
        ));
    }

    /// Decides every call that needs approval with `approver` instead of asking the client's user.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Who approves this request's call: the server's own approver, else the client's user.
    fn asking(
        &self,
        context: &RequestContext<RoleServer>,
        params: &CallToolRequestParams,
    ) -> approval::Asking {
        match &self.approver {
            Some(approver) => approval::Asking::Elicitation(approver.clone()),
            None => {
                // The caller an approval state is bound to: over HTTP its credentials, over stdio
                // the connection.
                let caller = match context.extensions.get::<axum::http::request::Parts>() {
                    Some(parts) => {
                        approval_state::Caller::http(in_flight_calls::credentials(&parts.headers))
                    }
                    None => approval_state::Caller::stdio(),
                };
                approval::Asking::for_request(
                    &context.peer,
                    &context.meta,
                    params,
                    &self.approval_states,
                    caller,
                    self.secrets(),
                )
            }
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(capabilities::declared())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools run in WebAssembly sandboxes with only the capabilities the operator granted. \
                 A failed call returns isError with a message saying what happened and how to fix it.",
            )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let _span =
            request_span::for_request("tools/list", None, &context, &self.secrets()).entered();
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        let served = self.served.current();
        let (page, next) = tool_pages::page(&served.listed, cursor, self.page_size)
            .map_err(|err| McpError::invalid_params(err.to_string(), None))?;
        let mut result = ListToolsResult::with_all_items(page);
        result.next_cursor = next;
        if let Some(ttl) = self.list_ttl_ms {
            result = result.with_ttl_ms(ttl);
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let served = self.served.current();
        served
            .tools
            .iter()
            .chain(served.listed.iter())
            .find(|tool| tool.name == name)
            .cloned()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::default();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let _watching = self.watchers.subscribe(context.sink().clone());
        context.cancelled().await;
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Over stdio the connection lasts: an older client is told of changes on it. Over HTTP
        // each request has a channel of its own, gone with the request.
        if context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_none()
        {
            self.watchers.legacy(context.peer.clone());
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let span =
            request_span::for_request("tools/call", Some(&request.name), &context, &self.secrets());
        self.run_call(request, context).instrument(span).await
    }

    /// rmcp hands over every request it could not parse as a custom request; one for a method it
    /// knows, with malformed params, is `invalid params` (-32602), anything else -32601.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        const KNOWN: [&str; 11] = [
            "tools/call",
            "tools/list",
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "prompts/list",
            "prompts/get",
            "completion/complete",
        ];
        if KNOWN.contains(&request.method.as_str()) {
            let message = format!(
                "malformed params for {}: {}",
                request.method,
                request.params.unwrap_or_default()
            );
            return Err(McpError::invalid_params(message, None));
        }
        Err(not_offered(&request.method))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let _span =
            request_span::for_request("resources/list", None, &context, &self.secrets()).entered();
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        offers::list_resources(&self.served.current().pipeline, cursor, self.page_size)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let _span =
            request_span::for_request("resources/templates/list", None, &context, &self.secrets())
                .entered();
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        offers::list_templates(&self.served.current().pipeline, cursor, self.page_size)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let span = request_span::for_request(
            "resources/read",
            Some(&request.uri),
            &context,
            &self.secrets(),
        );
        let pipeline = self.served.current().pipeline.clone();
        offers::read(&pipeline, &request.uri, context.ct.child_token())
            .instrument(span)
            .await
            .map(Into::into)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, McpError> {
        let _span =
            request_span::for_request("skills/list", None, &context, &self.secrets()).entered();
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        skills::list(&self.served.current().pipeline, cursor, self.page_size)
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, McpError> {
        let _span =
            request_span::for_request("skills/get", None, &context, &self.secrets()).entered();
        skills::get(&self.served.current().pipeline, &request.uri)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let _span =
            request_span::for_request("prompts/list", None, &context, &self.secrets()).entered();
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        offers::list_prompts(&self.served.current().pipeline, cursor, self.page_size)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let span = request_span::for_request(
            "prompts/get",
            Some(&request.name),
            &context,
            &self.secrets(),
        );
        let pipeline = self.served.current().pipeline.clone();
        offers::get_prompt(&pipeline, request, context.ct.child_token())
            .instrument(span)
            .await
            .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let span =
            request_span::for_request("completion/complete", None, &context, &self.secrets());
        let pipeline = self.served.current().pipeline.clone();
        offers::complete(&pipeline, request, context.ct.child_token())
            .instrument(span)
            .await
    }

    // What cordon does not offer answers -32601 with a message a person can read (rmcp's
    // defaults give only the method's name, which clients show as the whole error).

    async fn subscribe(
        &self,
        _request: rmcp::model::SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Err(not_offered("resources/subscribe"))
    }

    async fn unsubscribe(
        &self,
        _request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Err(not_offered("resources/unsubscribe"))
    }

    #[allow(deprecated)] // see logging.rs
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_level.set(request.level);
        Ok(())
    }
}

/// -32601 for a method cordon does not serve, saying so in words.
fn not_offered(method: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {method} (cordon serves tools, resources and prompts: use tools/list, resources/list and prompts/list)"
        ),
        None,
    )
}
