//! What contracts 0.2 and 0.3 have the same beyond what every version shares
//! ([`same_in_every_version!`]): `describe` with 0.2's tool spec (title, annotations, output
//! schema, guidelines, locks), `execute` with structured output, and the tool hooks with the
//! before-decision `ask`. Their WIT types differ by version (each `bindgen!` generates its own),
//! their shapes do not; a version's module invokes [`same_since_0_2!`] after
//! [`same_in_every_version!`], and defines `offered`, what its `plugin-info` offers besides tools
//! (nothing before 0.4).

macro_rules! same_since_0_2 {
    () => {
        pub async fn describe(
            plugin: &CordonPlugin,
            store: &mut Store<CallState>,
        ) -> wasmtime::Result<Declared> {
            let mut info = plugin.cordon_plugin_plugin().call_describe(store).await?;
            let offered = offered(&mut info);
            Ok(Declared {
                tools: info.tools.into_iter().map(declared_tool).collect(),
                hook: info.hook.map(hook_info),
                offered,
            })
        }

        fn declared_tool(spec: types::ToolSpec) -> DeclaredTool {
            let hints = spec.annotations;
            DeclaredTool {
                name: spec.name,
                title: spec.title,
                description: spec.description,
                parameters: spec.parameters,
                output_schema: spec.output_schema,
                execution_mode: match spec.execution_mode {
                    types::ExecutionMode::Parallel => ExecutionMode::Parallel,
                    types::ExecutionMode::Sequential => ExecutionMode::Sequential,
                },
                annotations: ToolAnnotations {
                    read_only: hints.read_only,
                    destructive: hints.destructive,
                    idempotent: hints.idempotent,
                    open_world: hints.open_world,
                },
                prompt_guidelines: spec.prompt_guidelines,
                locks: spec.locks,
            }
        }

        pub async fn execute(
            plugin: &CordonPlugin,
            store: &mut Store<CallState>,
            call: &GuestCall,
        ) -> wasmtime::Result<Result<GuestOutput, Failure>> {
            let outcome = plugin
                .cordon_plugin_plugin()
                .call_execute(store, &wit_call(call))
                .await?;
            Ok(match outcome {
                Ok(output) => Ok(GuestOutput {
                    content: output.content.into_iter().map(content_from_wit).collect(),
                    structured: output.structured,
                    details: output.details,
                    is_error: false,
                }),
                Err(failure) => Err(failure_from_wit(failure)),
            })
        }

        pub async fn before_tool_call(
            plugin: &CordonPlugin,
            store: &mut Store<CallState>,
            call: &GuestCall,
        ) -> wasmtime::Result<BeforeDecision> {
            let decision = plugin
                .cordon_plugin_plugin()
                .call_before_tool_call(store, &wit_call(call))
                .await?;
            Ok(match decision {
                types::BeforeDecision::Allow => BeforeDecision::Allow,
                types::BeforeDecision::Block(reason) => BeforeDecision::Block(reason),
                types::BeforeDecision::Rewrite(arguments) => BeforeDecision::Rewrite(arguments),
                types::BeforeDecision::Ask(reason) => BeforeDecision::Ask(reason),
            })
        }

        /// The hook's replacement, if it replaced the result.
        pub async fn after_tool_call(
            plugin: &CordonPlugin,
            store: &mut Store<CallState>,
            call: &GuestCall,
            result: &ToolResult,
        ) -> wasmtime::Result<Option<GuestOutput>> {
            let outcome = types::ToolResult {
                content: result.content.iter().map(content_to_wit).collect(),
                structured: result.structured.as_ref().map(|value| value.to_string()),
                details: result.details.to_string(),
                is_error: result.is_error,
            };
            let decision = plugin
                .cordon_plugin_plugin()
                .call_after_tool_call(store, &wit_call(call), &outcome)
                .await?;
            Ok(match decision {
                types::AfterDecision::Keep => None,
                types::AfterDecision::Replace(replacement) => Some(GuestOutput {
                    content: replacement
                        .content
                        .into_iter()
                        .map(content_from_wit)
                        .collect(),
                    structured: replacement.structured,
                    details: replacement.details,
                    is_error: replacement.is_error,
                }),
            })
        }
    };
}
