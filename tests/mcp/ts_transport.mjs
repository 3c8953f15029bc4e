// The transport the TypeScript client scripts connect with, from their first arguments:
// `stdio CORDON_BIN WORKSPACE` starts `cordon serve` in WORKSPACE (its compile cache in
// WORKSPACE/cache); `http URL` connects to a running `cordon serve --http`.
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export function transportFromArgs([mode, ...rest]) {
  if (mode === "stdio") {
    const [command, cwd] = rest;
    return new StdioClientTransport({
      command,
      args: ["serve"],
      cwd,
      env: { XDG_CACHE_HOME: `${cwd}/cache`, PATH: process.env.PATH },
    });
  }
  return new StreamableHTTPClientTransport(new URL(rest[0]));
}
