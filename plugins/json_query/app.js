// The json_query plugin: selects values from a JSON document with a JSONPath expression. The
// document is a file in a directory the operator granted, or comes in the call's arguments.

import { defineTool, readTextFile, ToolError } from "cordon-sdk";
import { select } from "./path.js";

defineTool({
  name: "json_query",
  label: "JSON query",
  description:
    "Selects values from a JSON document with a JSONPath expression ($.items[0].name, $..price, " +
    "$.books[?(@.price < 10)].title, $.list[1:3], $.*). Give the document as `path` (a .json file " +
    "in a granted directory) or as `document` (the JSON itself). Prints each match as " +
    "`location = value`.",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  examples: [
    { query: "$.books[?(@.price < 10)].title", document: { books: [{ title: "Dune", price: 8 }, { title: "Emma", price: 12 }] } },
  ],
  parameters: {
    type: "object",
    properties: {
      query: { type: "string", description: "JSONPath expression, starting at $" },
      path: { type: ["string", "null"], description: "A JSON file in a granted directory, e.g. /data/books.json" },
      document: { description: "The JSON document itself: any JSON value but null, or JSON text" },
      limit: { type: ["integer", "null"], minimum: 0, default: 100, description: "Most matches to show" },
    },
    required: ["query"],
    additionalProperties: false,
  },
  async execute(_toolCallId, { query, path, document, limit }) {
    // null means "not given": clients in strict mode send every field.
    path = path ?? undefined;
    document = document ?? undefined;
    limit = limit ?? 100;
    if ((path === undefined) === (document === undefined)) {
      throw new ToolError("give exactly one of `path` (a JSON file) and `document` (the JSON itself)");
    }
    const source = path ?? "the document argument";
    let root = document;
    if (path !== undefined) root = parseJson(readTextFile(path), path);
    else if (typeof document === "string") root = parseJson(document, source);
    const matches = select(root, query);
    if (matches.length === 0) {
      return { content: [{ type: "text", text: `no match for ${query} in ${source}` }], details: { matches: 0 } };
    }
    const shown = matches.slice(0, limit);
    const lines = shown.map(([value, location]) => `${location} = ${JSON.stringify(value)}`);
    if (matches.length > shown.length) {
      lines.push(`[${shown.length} of ${matches.length} matches shown; raise limit to see more]`);
    }
    return {
      content: [{ type: "text", text: lines.join("\n") }],
      details: { matches: matches.length, locations: shown.map(([, location]) => location) },
    };
  },
});

function parseJson(text, source) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ToolError(`${source} is not valid JSON: ${error.message}`);
  }
}
