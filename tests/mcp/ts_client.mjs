// The official TypeScript MCP SDK's client against `cordon serve`: lists the tools and calls the
// ones named on the command line, printing what the SDK parsed as one JSON document.
//
//   node ts_client.mjs stdio CORDON_BIN WORKSPACE CALLS_JSON
//   node ts_client.mjs http URL CALLS_JSON
//   node ts_client.mjs cancel URL TOOL ARGS_JSON AFTER_MS
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
if (mode === "cancel") {
  // node ts_client.mjs cancel URL TOOL ARGS_JSON AFTER_MS: call TOOL over HTTP and abort the call
  // after AFTER_MS (the SDK sends notifications/cancelled), printing what the SDK reported.
  const [url, tool, argsJson, afterMs] = rest;
  const client = new Client({ name: "cordon-ts-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const controller = new AbortController();
  setTimeout(() => controller.abort("the test cancels"), Number(afterMs));
  let outcome;
  try {
    outcome = { result: await client.callTool({ name: tool, arguments: JSON.parse(argsJson) }, undefined, { signal: controller.signal }) };
  } catch (error) {
    outcome = { thrown: String(error) };
  }
  console.log(JSON.stringify({ protocolVersion: client.transport?.protocolVersion ?? null, ...outcome }));
  // Give the cancellation notification time to leave before the process ends.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await client.close();
  process.exit(0);
}
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
