// Test fixture: a session hook written with the JavaScript SDK, deciding as the other SDKs'
// session fixtures do (tests/integration/session_sdks.rs): a prompt that says "forbidden" is
// blocked; any other gets context naming what the hook saw and is routed to `echo` only; a
// reply's call with id `drop-me` is dropped; an answer without DONE is continued once.

import { defineSessionHook } from "cordon-sdk";

const LANG = "js";

defineSessionHook({
  stages: ["prompt"],
  run({ payload }) {
    const prompt = payload.prompt ?? "";
    if (prompt.includes("forbidden")) return { block: `${LANG} hook: forbidden prompt` };
    return { addContext: `${LANG} hook saw: ${prompt}`, onlyTools: ["echo"] };
  },
});

defineSessionHook({
  stages: ["model-response", "stop"],
  async run({ stage, payload }) {
    if (stage === "model-response") {
      return { dropCalls: (payload.calls ?? []).filter((c) => c.id === "drop-me").map((c) => c.id) };
    }
    if ((payload.answer ?? "").includes("DONE") || payload.continuations > 0) return undefined;
    return { replace: `${LANG} hook: finish with DONE` };
  },
});
