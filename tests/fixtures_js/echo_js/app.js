// Benchmark fixture: the trivial `echo` tool written with the JavaScript SDK, so the benchmark
// suite can set a JavaScript call beside the Rust, Python and C ones (see host/benches/suite/).

import { defineTool } from "cordon-sdk";

defineTool({
  name: "echo",
  label: "Echo",
  description: "Returns the text it is given.",
  parameters: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
  },
  execute(toolCallId, { text }) {
    return text;
  },
});

// Contract 0.2 in the SDK's idiom: MCP's annotations, an output schema and structuredContent.
defineTool({
  name: "js_stats",
  title: "Word statistics",
  description: "Counts the words and characters of a text.",
  annotations: { readOnlyHint: true, openWorldHint: false },
  promptGuidelines: ["Count words with js_stats."],
  locks: ["/text"],
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  outputSchema: {
    type: "object",
    properties: { words: { type: "integer" }, characters: { type: "integer" } },
    required: ["words", "characters"],
  },
  execute(toolCallId, { text }) {
    const stats = { words: text.split(/\s+/).filter(Boolean).length, characters: text.length };
    return { content: [{ type: "text", text: JSON.stringify(stats) }], structuredContent: stats };
  },
});
