// The official TypeScript MCP SDK's client against `cordon serve`: lists the tools and calls the
// ones named on the command line, printing what the SDK parsed as one JSON document.
//
//   node ts_client.mjs stdio CORDON_BIN WORKSPACE CALLS_JSON
//   node ts_client.mjs http URL CALLS_JSON
//
// CALLS_JSON is a list of [tool, arguments]. The SDK validates structuredContent against each
// tool's outputSchema itself and throws on a mismatch or an absence, so a call that comes back
// is one the SDK accepted.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...rest] = process.argv.slice(2);
let transport;
let calls;
if (mode === "stdio") {
  const [command, cwd, callsJson] = rest;
  transport = new StdioClientTransport({
    command,
    args: ["serve"],
    cwd,
    env: { XDG_CACHE_HOME: `${cwd}/cache`, PATH: process.env.PATH },
  });
  calls = JSON.parse(callsJson);
} else {
  const [url, callsJson] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url));
  calls = JSON.parse(callsJson);
}

const client = new Client({ name: "cordon-ts-test", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const [name, args] of calls) {
  try {
    results.push(await client.callTool({ name, arguments: args }));
  } catch (error) {
    results.push({ thrown: String(error) });
  }
}
console.log(JSON.stringify({ tools, results }));
await client.close();
