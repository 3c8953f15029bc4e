// The official TypeScript MCP SDK's client reading the skills `cordon serve` serves (the
// io.modelcontextprotocol/skills extension): `skills/list`, `skills/get` of each, and every file
// of every skill with `resources/read`, printing what it got as one JSON document (each file's
// bytes base64-encoded, for the caller to check against the listed digests).
//
//   node ts_skills.mjs stdio CORDON_BIN WORKSPACE
//   node ts_skills.mjs http URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { transportFromArgs } from "./ts_transport.mjs";
import { z } from "zod";

const transport = transportFromArgs(process.argv.slice(2));
const client = new Client({ name: "cordon-ts-skills", version: "1.0.0" });
await client.connect(transport);
const anything = z.object({}).passthrough();
const listed = await client.request({ method: "skills/list", params: {} }, anything);
const fetched = [];
const files = {};
for (const skill of listed.skills) {
  fetched.push(await client.request({ method: "skills/get", params: { uri: skill.uri } }, anything));
  for (const entry of skill.resources) {
    const read = await client.readResource({ uri: entry.uri });
    const part = read.contents[0];
    files[entry.uri] = part.blob ?? Buffer.from(part.text, "utf8").toString("base64");
  }
}
let unknown;
try {
  await client.request({ method: "skills/get", params: { uri: "skill://nothing/SKILL.md" } }, anything);
} catch (error) {
  unknown = { thrown: String(error), code: error.code ?? null };
}
console.log(JSON.stringify({ capabilities: client.getServerCapabilities(), listed, fetched, files, unknown }));
await client.close();
