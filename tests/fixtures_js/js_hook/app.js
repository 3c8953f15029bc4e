// Test fixture: a hook and a tool written with the JavaScript SDK. The before-hook blocks `echo`
// calls that say "forbidden", rewrites ones that start with "shout" to upper case and asks for a
// person's approval of ones that start with "ask" (contract 0.2); the
// after-hook tags every `echo` result. The `js_context` tool reports its settings and call id,
// streams one progress update, and throws a TypeError when asked to. The `js_fetch` tool fetches
// a URL with the standard `fetch` (over wasi:http, through the host's grants), handing it the
// call's cancellation signal.

import { defineHook, defineTool } from "cordon-sdk";

defineHook({
  tools: ["echo"],
  beforeToolCall(call) {
    const text = call.arguments.text ?? "";
    if (text.includes("forbidden")) return { block: true, reason: "the JavaScript hook does not allow that word" };
    if (text.startsWith("shout")) return { arguments: { ...call.arguments, text: text.toUpperCase() } };
    if (text.startsWith("ask")) return { ask: "the JavaScript hook wants a person to see this" };
    return undefined;
  },
  afterToolCall(call, result) {
    const text = result.content.map((block) => block.text ?? "").join("");
    return { content: [{ type: "text", text: `${text} [seen by javascript]` }] };
  },
});

defineTool({
  name: "js_context",
  label: "JS context",
  description: "Reports what the SDK hands a tool: its call id, settings and cancellation.",
  parameters: {
    type: "object",
    properties: { fail: { type: "boolean" } },
    additionalProperties: false,
  },
  async execute(toolCallId, { fail = false }, { signal, onUpdate, settings }) {
    onUpdate({ content: [{ type: "text", text: "halfway" }], details: { step: 1 } });
    if (fail) throw new TypeError("asked to fail");
    return {
      content: [{ type: "text", text: `call ${toolCallId}, aborted: ${signal.aborted}` }],
      details: { settings },
    };
  },
});

defineTool({
  name: "js_fetch",
  label: "JS fetch",
  description: "Fetches a URL and answers its status and body.",
  parameters: {
    type: "object",
    properties: { url: { type: "string" } },
    required: ["url"],
  },
  async execute(_toolCallId, { url }, { signal }) {
    const response = await fetch(url, { signal });
    return `${response.status}: ${await response.text()}`;
  },
});
