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
