// The official TypeScript MCP SDK's client reading what a plugin serves besides tools through
// `cordon serve`: lists resources, templates and prompts, reads the URIs given, fills in a prompt
// and completes an argument, printing what the SDK parsed as one JSON document.
//
//   node ts_offers.mjs stdio CORDON_BIN WORKSPACE
//   node ts_offers.mjs http URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { transportFromArgs } from "./ts_transport.mjs";

const transport = transportFromArgs(process.argv.slice(2));
const client = new Client({ name: "cordon-ts-offers", version: "1.0.0" });
await client.connect(transport);
const attempt = async (what) => {
  try {
    return await what();
  } catch (error) {
    return { thrown: String(error), code: error.code ?? null };
  }
};
const seen = {
  capabilities: client.getServerCapabilities(),
  resources: (await client.listResources()).resources,
  templates: (await client.listResourceTemplates()).resourceTemplates,
  prompts: (await client.listPrompts()).prompts,
  guide: await attempt(() => client.readResource({ uri: "docs://guide" })),
  logo: await attempt(() => client.readResource({ uri: "docs://logo" })),
  note: await attempt(() => client.readResource({ uri: "notes:///todo.md" })),
  unknown: await attempt(() => client.readResource({ uri: "docs://nothing" })),
  prompt: await attempt(() => client.getPrompt({ name: "review", arguments: { file: "todo.md" } })),
  completion: await attempt(() =>
    client.complete({ ref: { type: "ref/prompt", name: "review" }, argument: { name: "focus", value: "c" } }),
  ),
};
console.log(JSON.stringify(seen));
await client.close();
