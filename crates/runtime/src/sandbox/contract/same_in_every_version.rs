//! What every contract version's module has the same, written once: its WIT types differ by
//! version (each `bindgen!` generates its own), but their shapes here do not. A version's module
//! invokes [`same_in_every_version!`] after `use self::cordon::plugin::{host, types};`, and gets:
//! the hook spec, a call, a failure and content blocks converted between WIT and host terms, and
//! the contract's host functions (`log`, `progress`, `cancelled`, `settings`) for [`CallState`].
//!
//! [`CallState`]: crate::sandbox::call_state::CallState

macro_rules! same_in_every_version {
    () => {
        /// A hook of a version without session stages.
        fn hook_info(hook: types::HookSpec) -> HookInfo {
            HookInfo {
                tools: hook.tools,
                before: hook.before,
                after: hook.after,
                stages: Vec::new(),
            }
        }
        same_in_every_version!(without_hook_info);
    };
    (without_hook_info) => {
        fn wit_call(call: &GuestCall) -> types::ToolCall {
            types::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            }
        }

        fn failure_from_wit(failure: types::ToolFailure) -> Failure {
            Failure::new(
                match failure.kind {
                    types::FailureKind::ToolError => ErrorKind::ToolError,
                    types::FailureKind::CapabilityDenied => ErrorKind::CapabilityDenied,
                },
                failure.message,
                content::details(&failure.details),
            )
        }

        fn content_from_wit(block: types::Content) -> Content {
            match block {
                types::Content::Text(text) => Content::Text { text },
                types::Content::Image(image) => content::image(image.mime_type, image.data),
            }
        }

        fn content_to_wit(block: &Content) -> types::Content {
            match block {
                Content::Text { text } => types::Content::Text(text.clone()),
                Content::Image { mime_type, data } => types::Content::Image(types::Image {
                    mime_type: mime_type.clone(),
                    data: data.clone(),
                }),
            }
        }

        impl types::Host for CallState {}

        impl host::Host for CallState {
            fn log(&mut self, level: host::Level, message: String) {
                let level = match level {
                    host::Level::Trace => LogLevel::Trace,
                    host::Level::Debug => LogLevel::Debug,
                    host::Level::Info => LogLevel::Info,
                    host::Level::Warn => LogLevel::Warn,
                    host::Level::Error => LogLevel::Error,
                };
                self.log_line(level, message);
            }

            fn progress(&mut self, update: types::ToolOutput) {
                let content = update.content.into_iter().map(content_from_wit).collect();
                self.report_progress(content, &update.details);
            }

            fn cancelled(&mut self) -> bool {
                self.is_cancelled()
            }

            fn settings(&mut self) -> String {
                self.settings_json()
            }
        }
    };
}
