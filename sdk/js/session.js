// Session hooks for the JavaScript SDK (contract cordon:plugin@0.3.0): `defineSessionHook`
// registers a function for some session stages, and `sessionDecision` runs every function of a
// stage and combines what they decide. docs/session-hooks.md says what each stage's payload holds
// and which decisions it takes.

/** The stages by their contract names, in the order a session meets them. */
export const STAGES = [
  "session-start",
  "prompt",
  "model-request",
  "model-response",
  "compaction",
  "stop",
  "session-end",
];

const SESSION_HOOKS = [];

/**
 * Declares a session hook: `stages` names the stages it runs at, and `run({ stage, payload })`
 * returns nothing (proceed) or a decision `{ block, replace, addContext, onlyTools, dropCalls }`
 * (any subset; a field the stage does not take makes the host stop the turn). It may be async.
 * Several hooks on one stage run in order: the first `block` ends it, a later `replace` wins,
 * contexts are joined, `onlyTools` lists intersect and `dropCalls` add up.
 */
export function defineSessionHook(hook) {
  const { stages, run } = hook ?? {};
  if (!Array.isArray(stages) || stages.length === 0 || stages.some((s) => !STAGES.includes(s))) {
    throw new TypeError(`defineSessionHook: stages must be a non-empty array of ${STAGES.join(", ")}`);
  }
  if (typeof run !== "function") throw new TypeError("defineSessionHook: give run(event)");
  SESSION_HOOKS.push({ stages: [...stages], run });
  return hook;
}

/** The stages some session hook declared, in session order. */
export function declaredStages() {
  return STAGES.filter((stage) => SESSION_HOOKS.some((hook) => hook.stages.includes(stage)));
}

const text = (value, field) => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new TypeError(`a session decision's ${field} must be a string`);
  return value;
};

const names = (value, field) => {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((n) => typeof n !== "string")) {
    throw new TypeError(`a session decision's ${field} must be an array of strings`);
  }
  return value;
};

/** Runs the hooks of `event.stage` (the contract's `session-event`) into one `session-decision`. */
export async function sessionDecision(event) {
  const view = { stage: event.stage, payload: event.payload ? JSON.parse(event.payload) : {} };
  const combined = { dropCalls: [] };
  const contexts = [];
  for (const hook of SESSION_HOOKS) {
    if (!hook.stages.includes(view.stage)) continue;
    const decision = await hook.run(view);
    if (!decision) continue;
    const block = text(decision.block, "block");
    if (block !== undefined) return { block, dropCalls: [] };
    const replace = text(decision.replace, "replace");
    if (replace !== undefined) combined.replace = replace;
    const context = text(decision.addContext, "addContext");
    if (context !== undefined) contexts.push(context);
    const only = names(decision.onlyTools, "onlyTools");
    if (only !== undefined) {
      combined.onlyTools = combined.onlyTools === undefined ? [...only] : combined.onlyTools.filter((n) => only.includes(n));
    }
    for (const id of names(decision.dropCalls, "dropCalls") ?? []) {
      if (!combined.dropCalls.includes(id)) combined.dropCalls.push(id);
    }
  }
  if (contexts.length > 0) combined.addContext = contexts.join("\n");
  return combined;
}

/** Runs the session hooks of `stage` over `payload` as the host would (for tests in plain Node). */
export async function runSessionHook(stage, payload) {
  return sessionDecision({ stage, payload: JSON.stringify(payload ?? {}) });
}
