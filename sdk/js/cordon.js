// The cordon JavaScript SDK: define tools and hooks in the shape TypeScript agent frameworks use
// (`name`, `label`, `description`, `parameters`, `execute(toolCallId, params, context)`, and MCP's
// `title`, `annotations`, `outputSchema`, `structuredContent`), and this module answers the
// component's `plugin` export (contract cordon:plugin@0.3.0) for them; session hooks are in session.js. `cordon build` (componentize-js) wires
// the host's imports in through `bindHost`; without them (plain Node, in a test) the tools still
// run: logs go to the console, progress is dropped, nothing is cancelled, settings are `{}`.

import { declaredStages, sessionDecision } from "./session.js";

export { defineSessionHook, runSessionHook, STAGES } from "./session.js";

const TOOLS = new Map();
const BEFORE = [];
const AFTER = [];

/** A failure the tool reports: a `tool_error` result carrying this message and `details`. */
export class ToolError extends Error {
  constructor(message, details) {
    super(message);
    this.name = "ToolError";
    this.details = details;
  }
}

/** The tool needed something the operator did not grant: a `capability_denied` result. */
export class CapabilityDenied extends Error {
  constructor(message, details) {
    super(message);
    this.name = "CapabilityDenied";
    this.details = details;
  }
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Declares a tool. `parameters` is the JSON Schema of the arguments object (the host validates
 * every call against it before `execute` runs). `execute(toolCallId, params, { signal, onUpdate,
 * settings, log })` may be async and returns a string, `{ content, details }` (content blocks
 * `{ type: "text", text }` or `{ type: "image", mimeType, data }`), or any JSON value. A thrown
 * error becomes a `tool_error` result ("Name: message"); throw `CapabilityDenied` for a refused
 * capability. Set `executionMode: "sequential"` for a tool that must not run beside others.
 *
 * Contract 0.2: `title`; `annotations` with MCP's hints (`readOnlyHint`, `destructiveHint`,
 * `idempotentHint`, `openWorldHint`; leave one out to leave it unsaid); `outputSchema` (then
 * return `{ content, structuredContent }` matching it); `promptGuidelines` (lines for the agent's
 * system prompt); `locks` (JSON pointers into the arguments naming what a call touches);
 * `examples` (argument objects put in the schema's `examples`: models read them, and `cordon test`
 * calls the tool with each).
 */
export function defineTool(tool) {
  const {
    name,
    label,
    title,
    description,
    parameters,
    execute,
    executionMode = "parallel",
    annotations = {},
    outputSchema,
    promptGuidelines = [],
    locks = [],
    examples = [],
  } = tool ?? {};
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new TypeError(`defineTool: name ${JSON.stringify(name)} must match ${TOOL_NAME}`);
  }
  if (TOOLS.has(name)) throw new TypeError(`defineTool: a tool named "${name}" is already defined`);
  if (typeof description !== "string" || description === "") {
    throw new TypeError(`defineTool(${name}): give a description, the model reads it to choose tools`);
  }
  if (typeof execute !== "function") throw new TypeError(`defineTool(${name}): execute must be a function`);
  if (executionMode !== "parallel" && executionMode !== "sequential") {
    throw new TypeError(`defineTool(${name}): executionMode is "parallel" or "sequential"`);
  }
  let schema = parameters ?? { type: "object", properties: {} };
  if (typeof schema !== "object" || schema.type !== "object") {
    throw new TypeError(`defineTool(${name}): parameters must be a JSON Schema with "type": "object"`);
  }
  if (!Array.isArray(examples) || examples.some((e) => typeof e !== "object" || e === null || Array.isArray(e))) {
    throw new TypeError(`defineTool(${name}): examples must be an array of argument objects`);
  }
  if (examples.length > 0) schema = { ...schema, examples };
  if (outputSchema !== undefined && (typeof outputSchema !== "object" || outputSchema.type !== "object")) {
    throw new TypeError(`defineTool(${name}): outputSchema must be a JSON Schema with "type": "object"`);
  }
  const strings = (list, what) => {
    if (!Array.isArray(list) || list.some((item) => typeof item !== "string")) {
      throw new TypeError(`defineTool(${name}): ${what} must be an array of strings`);
    }
    return list;
  };
  const hint = (key) => {
    const value = annotations?.[key];
    if (value !== undefined && typeof value !== "boolean") {
      throw new TypeError(`defineTool(${name}): annotations.${key} must be true, false or left out`);
    }
    return value;
  };
  const entry = {
    name,
    title: title ?? label ?? name,
    description,
    parameters: schema,
    execute,
    executionMode,
    annotations: {
      readOnly: hint("readOnlyHint"),
      destructive: hint("destructiveHint"),
      idempotent: hint("idempotentHint"),
      openWorld: hint("openWorldHint"),
    },
    outputSchema,
    promptGuidelines: strings(promptGuidelines, "promptGuidelines"),
    locks: strings(locks, "locks"),
  };
  TOOLS.set(name, entry);
  return entry;
}

/**
 * Declares a hook. `tools` lists the tool-name globs it watches (`*`, `?`; empty or absent: all).
 * `beforeToolCall(call)` returns nothing (allow), `{ block: true, reason }`, `{ arguments }` to
 * run the call with other arguments, or `{ ask: reason }` to run it only if a person approves.
 * `afterToolCall(call, result)` returns nothing (keep), or the whole new result: a string (its
 * text) or `{ content, structuredContent?, details?, isError? }`. Nothing of the old result is
 * carried over: a part left out is gone (spread `...result` to keep parts on purpose), so text
 * cut by a hook cannot survive in the old structured output or details. Both may be async.
 */
export function defineHook(hook) {
  const { tools = [], beforeToolCall, afterToolCall } = hook ?? {};
  if (!Array.isArray(tools) || tools.some((t) => typeof t !== "string")) {
    throw new TypeError("defineHook: tools must be an array of tool-name globs");
  }
  if (typeof beforeToolCall !== "function" && typeof afterToolCall !== "function") {
    throw new TypeError("defineHook: give beforeToolCall, afterToolCall or both");
  }
  if (typeof beforeToolCall === "function") BEFORE.push({ tools, run: beforeToolCall });
  if (typeof afterToolCall === "function") AFTER.push({ tools, run: afterToolCall });
  return hook;
}

// The host's imports (`cordon:plugin/host`), or stand-ins for running outside a component.
let host = {
  log: (level, message) => console.error(`[${level}] ${message}`),
  progress: () => {},
  cancelled: () => false,
  settings: () => "{}",
};

// The granted directories (`wasi:filesystem/preopens`), when running inside a component.
let getDirectories = null;

/** Connects the SDK to the component's imports; called by the entry `cordon build` writes. */
export function bindHost(imports, preopens) {
  host = imports;
  getDirectories = preopens.getDirectories;
}

function wasiErrorCode(error) {
  return typeof error?.payload === "string" ? error.payload : error?.message ?? String(error);
}

/**
 * Reads a file from a directory the operator granted, as bytes. An absolute path names a file
 * under a granted guest directory (`/data/a.json`); a relative one starts at the first granted
 * directory. Outside a component (plain Node) it reads the host file system.
 */
export function readFile(path) {
  if (typeof path !== "string" || path === "") throw new ToolError("readFile needs a path");
  if (!getDirectories) {
    const fs = globalThis.process?.getBuiltinModule?.("node:fs");
    if (!fs) throw new ToolError("readFile: no file system here");
    return new Uint8Array(fs.readFileSync(path));
  }
  const grants = granted();
  const shown = grants.map(([, guest]) => guest).join(", ") || "none";
  let base;
  let rest;
  if (path.startsWith("/")) {
    const match = grants
      .filter(([, guest]) => path === guest || path.startsWith(guest.endsWith("/") ? guest : `${guest}/`))
      .sort((a, b) => b[1].length - a[1].length)[0];
    if (!match) {
      askOutside(path);
      throw new CapabilityDenied(`"${path}" is outside the directories this tool may read (${shown}); use a path inside one of them`);
    }
    base = match[0];
    rest = path.slice(match[1].length).replace(/^\/+/, "");
  } else {
    if (grants.length === 0) throw new CapabilityDenied(`"${path}": this tool has no directories granted`);
    base = grants[0][0];
    rest = path;
  }
  if (rest.split("/").includes("..")) {
    throw new CapabilityDenied(`"${path}" leaves the granted directories (${shown}); use a path inside one of them`);
  }
  let file;
  try {
    file = base.openAt({}, rest === "" ? "." : rest, {}, { read: true });
  } catch (error) {
    const code = wasiErrorCode(error);
    if (code === "no-entry") throw new ToolError(`"${path}" does not exist`);
    if (code === "access" || code === "not-permitted") {
      throw new CapabilityDenied(`"${path}" may not be read (${code}); the granted directories are ${shown}`);
    }
    throw new ToolError(`cannot open "${path}": ${code}`);
  }
  const chunks = [];
  let offset = 0n;
  let total = 0;
  for (;;) {
    let bytes;
    let end;
    try {
      [bytes, end] = file.read(1n << 20n, offset);
    } catch (error) {
      throw new ToolError(`cannot read "${path}": ${wasiErrorCode(error)}`);
    }
    chunks.push(bytes);
    total += bytes.length;
    offset += BigInt(bytes.length);
    if (end || bytes.length === 0) break;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * Whether a preopen is the host's directory for paths outside the grants, not a grant: at `/`,
 * and removed (its link count is 0, which no granted directory's can be).
 */
function isOutsideGrants([descriptor, guest]) {
  if (guest !== "/") return false;
  try {
    return descriptor.stat().linkCount === 0n;
  } catch {
    return false;
  }
}

/** The granted directories: every preopen but the host's directory for paths outside them. */
function granted() {
  return getDirectories().filter((preopen) => !isOutsideGrants(preopen));
}

/** Asks the host to open a path outside the grants, which it refuses and so reports (an event, the
 * audit log), as it does for a plugin reading through the C library. */
function askOutside(path) {
  const outside = getDirectories().find(isOutsideGrants);
  try {
    outside?.[0].openAt({}, path.replace(/^\/+/, ""), {}, { read: true });
  } catch {
    // Refused, as expected.
  }
}

/** Reads a UTF-8 text file from a granted directory (see `readFile`). */
export function readTextFile(path) {
  return new TextDecoder().decode(readFile(path));
}

/** Writes a line to the host's log; level is trace, debug, info, warn or error. */
export function log(level, message) {
  host.log(level, String(message));
}

/** This plugin's `settings` table from the operator's cordon.toml. */
export function settings() {
  const raw = host.settings();
  return raw ? JSON.parse(raw) : {};
}

/** Whether the current call was cancelled. */
export function cancelled() {
  return host.cancelled();
}

/**
 * The call's cancellation as a real AbortSignal (so it can be handed to `fetch`): reading
 * `aborted` (or calling `throwIfAborted`) asks the host, and aborts the signal, firing its
 * listeners, once the host says the call was cancelled.
 */
function cancellationSignal() {
  const controller = new AbortController();
  const signal = controller.signal;
  const nativeAborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, "aborted").get;
  const aborted = () => {
    if (!nativeAborted.call(signal) && host.cancelled()) {
      const reason = new Error("the call was cancelled");
      reason.name = "AbortError";
      controller.abort(reason);
    }
    return nativeAborted.call(signal);
  };
  Object.defineProperty(signal, "aborted", { get: aborted });
  Object.defineProperty(signal, "throwIfAborted", {
    value() {
      if (aborted()) throw signal.reason;
    },
  });
  return signal;
}

function base64Bytes(data) {
  if (data instanceof Uint8Array) return data;
  if (typeof data !== "string") throw new TypeError("an image's data must be base64 text or a Uint8Array");
  const binary = atob(data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The wire form of one content block. */
function contentBlock(block) {
  if (typeof block === "string") return { tag: "text", val: block };
  if (block?.type === "text") return { tag: "text", val: String(block.text) };
  if (block?.type === "image") {
    return { tag: "image", val: { mimeType: String(block.mimeType), data: base64Bytes(block.data) } };
  }
  throw new TypeError(`a content block is { type: "text", text } or { type: "image", mimeType, data }, not ${JSON.stringify(block)}`);
}

function detailsText(details) {
  return details === undefined || details === null ? "" : JSON.stringify(details);
}

function structuredText(value) {
  return value === undefined || value === null ? undefined : JSON.stringify(value);
}

/** What a tool returned, as the `tool-output` record. */
function toolOutput(value) {
  if (value === undefined || value === null) return { content: [], structured: undefined, details: "" };
  if (typeof value === "string") return { content: [{ tag: "text", val: value }], structured: undefined, details: "" };
  if (typeof value === "object" && Array.isArray(value.content)) {
    return {
      content: value.content.map(contentBlock),
      structured: structuredText(value.structuredContent),
      details: detailsText(value.details),
    };
  }
  return { content: [{ tag: "text", val: JSON.stringify(value) }], structured: undefined, details: "" };
}

/**
 * What an after-hook returned, taken as the whole new result: a string is its text; an object
 * must give its `content`, and `structuredContent`, `details` and `isError` are what it says
 * (absent: none, none, false), never the old result's.
 */
function replacement(change) {
  if (typeof change === "string") {
    return { content: [{ type: "text", text: change }], structuredContent: undefined, details: undefined, isError: false };
  }
  if (typeof change !== "object" || !Array.isArray(change.content)) {
    const message = `afterToolCall returned ${String(JSON.stringify(change)).slice(0, 200)}, which has no content array; return nothing to keep the result, or the whole new result: a string, or { content: [...], structuredContent?, details?, isError? } (spread ...result to keep parts of the old one)`;
    // The throw ends the hook (it fails closed); the log line is where its author reads why.
    host.log("error", message);
    throw new TypeError(message);
  }
  return {
    content: change.content,
    structuredContent: change.structuredContent,
    details: change.details,
    isError: Boolean(change.isError),
  };
}

/** The wire content as the blocks tools return. */
function fromContent(content) {
  return content.map((c) =>
    c.tag === "text"
      ? { type: "text", text: c.val }
      : { type: "image", mimeType: c.val.mimeType, data: c.val.data },
  );
}

function failure(error) {
  if (error instanceof CapabilityDenied) {
    return { kind: "capability-denied", message: error.message, details: detailsText(error.details) };
  }
  if (error instanceof ToolError) {
    return { kind: "tool-error", message: error.message, details: detailsText(error.details) };
  }
  if (error instanceof Error) {
    const details = { exception: error.name, stack: String(error.stack ?? "").split("\n").slice(0, 8).join("\n") };
    return { kind: "tool-error", message: `${error.name}: ${error.message}`, details: JSON.stringify(details) };
  }
  return { kind: "tool-error", message: `thrown: ${String(error)}`, details: "" };
}

/** A failed `execute`: componentize-js returns the thrown `payload` as the result's `err`. */
class Failure extends Error {
  constructor(payload) {
    super(payload.message);
    this.payload = payload;
  }
}

function globMatches(glob, name) {
  const pattern = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${pattern}$`).test(name);
}

function watching(entries, name) {
  return entries.filter((e) => e.tools.length === 0 || e.tools.some((g) => globMatches(g, name)));
}

function callView(call) {
  return { id: call.id, name: call.name, arguments: call.arguments ? JSON.parse(call.arguments) : {} };
}

/** Runs one tool call the way `plugin.execute` does, outside a component too (for tests). */
export async function runTool(name, params, toolCallId = "test-call") {
  const entry = TOOLS.get(name);
  if (!entry) throw new ToolError(`this plugin has no tool named "${name}"`);
  const context = {
    signal: cancellationSignal(),
    onUpdate: (partial) => host.progress(toolOutput(partial)),
    get settings() {
      return settings();
    },
    log,
  };
  return entry.execute(toolCallId, params, context);
}

/** The component's `cordon:plugin/plugin` export. */
export const plugin = {
  describe() {
    const tools = [...TOOLS.values()].map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      parameters: JSON.stringify(t.parameters),
      outputSchema: t.outputSchema === undefined ? undefined : JSON.stringify(t.outputSchema),
      executionMode: t.executionMode,
      annotations: t.annotations,
      promptGuidelines: t.promptGuidelines,
      locks: t.locks,
    }));
    const hooks = [...BEFORE, ...AFTER];
    const stages = declaredStages();
    let hook;
    if (hooks.length > 0 || stages.length > 0) {
      const everything = hooks.some((h) => h.tools.length === 0);
      const globs = [...new Set(hooks.flatMap((h) => h.tools))].sort();
      hook = { tools: everything ? [] : globs, before: BEFORE.length > 0, after: AFTER.length > 0, stages };
    }
    return { tools, hook };
  },

  async execute(call) {
    try {
      const params = call.arguments ? JSON.parse(call.arguments) : {};
      return toolOutput(await runTool(call.name, params, call.id));
    } catch (error) {
      throw new Failure(failure(error));
    }
  },

  async beforeToolCall(call) {
    const view = callView(call);
    for (const entry of watching(BEFORE, call.name)) {
      const decision = await entry.run(view);
      if (!decision) continue;
      if (decision.block) return { tag: "block", val: String(decision.reason ?? "blocked by a hook") };
      if (decision.arguments) return { tag: "rewrite", val: JSON.stringify(decision.arguments) };
      if (decision.ask !== undefined) return { tag: "ask", val: String(decision.ask) };
    }
    return { tag: "allow" };
  },

  async afterToolCall(call, outcome) {
    const view = callView(call);
    let result = {
      content: fromContent(outcome.content),
      structuredContent: outcome.structured ? JSON.parse(outcome.structured) : undefined,
      details: outcome.details ? JSON.parse(outcome.details) : undefined,
      isError: outcome.isError,
    };
    let replaced = false;
    for (const entry of watching(AFTER, call.name)) {
      const change = await entry.run(view, result);
      if (!change) continue;
      result = replacement(change);
      replaced = true;
    }
    if (!replaced) return { tag: "keep" };
    const output = toolOutput({
      content: result.content,
      structuredContent: result.structuredContent,
      details: result.details,
    });
    return { tag: "replace", val: { ...output, isError: Boolean(result.isError) } };
  },

  // A throw fails the hook, and the host stops the turn (it fails closed).
  sessionHook: sessionDecision,
};
