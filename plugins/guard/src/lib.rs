//! The bundled `guard` hook (before): refuses writes and edits to protected files, and any call
//! whose arguments match a deny pattern, with a reason that tells the model what to do instead.
//! Its rules come from its `settings` in cordon.toml (see the README).

mod rules;

use cordon_sdk::prelude::*;
use rules::Rules;

struct Guard;

impl Hook for Guard {
    const AFTER: bool = false;

    fn before_tool_call(&self, call: &ToolCall, cx: &Context) -> BeforeDecision {
        let rules = match Rules::from_settings(&cx.settings_json()) {
            Ok(rules) => rules,
            // Fail closed: a guard that cannot read its rules lets nothing through.
            Err(problem) => {
                return BeforeDecision::Block(format!(
                    "the guard's settings are invalid ({problem}); the operator must fix them"
                ));
            }
        };
        match rules.check(call) {
            Some(reason) => {
                cx.log(LogLevel::Info, format!("blocked {}: {reason}", call.name));
                BeforeDecision::Block(reason)
            }
            None => BeforeDecision::Allow,
        }
    }
}

cordon_sdk::export_plugin!(hook: Guard);
