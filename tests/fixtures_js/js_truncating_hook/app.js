// Test fixture: an after-hook written with the JavaScript SDK that replaces results of
// `long_report` (the `truncating_hook` fixture's tool, which has an output schema) as the call's
// `hook` argument says: `truncate` keeps the first line of the text and returns nothing else,
// `structured` adds structured output of its own that matches the schema, `mismatch` adds
// structured output that breaks it, `details_only` returns only details (which the SDK used to
// merge into the old result); anything else keeps the result.

import { defineHook } from "cordon-sdk";

defineHook({
  tools: ["long_report"],
  afterToolCall(call, result) {
    const text = result.content.map((block) => block.text ?? "").join("");
    const first = text.split("\n")[0];
    const content = [{ type: "text", text: `${first} [cut by the JavaScript hook]` }];
    switch (call.arguments.hook) {
      case "truncate":
        return { content };
      case "structured":
        return { content, structuredContent: { body: first, lines: 1 } };
      case "mismatch":
        return { content, structuredContent: { body: first, lines: "one" } };
      case "details_only":
        return { details: { seenBy: "the JavaScript hook" } };
      default:
        return undefined;
    }
  },
});
