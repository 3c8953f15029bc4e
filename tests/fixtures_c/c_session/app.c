/* Test fixture: a session hook written with the C SDK, deciding as the other SDKs' session
 * fixtures do (tests/integration/session_sdks.rs): a prompt that says "forbidden" is blocked; any
 * other gets context naming what the hook saw and is routed to `echo` only; a reply's call with
 * id `drop-me` is dropped (an id the reply does not have drops nothing); an answer without DONE is
 * continued once. */

#include <stdlib.h>
#include <string.h>

#include "cordon.h"

static void decide(const cordon_session_event *event, cordon_session_decision *decision) {
    if (strcmp(event->stage, "prompt") == 0) {
        char *prompt = NULL;
        if (!cordon_payload_string(event, "prompt", &prompt)) {
            cordon_session_block(decision, "c hook: the prompt event has no prompt");
            return;
        }
        if (strstr(prompt, "forbidden")) {
            cordon_session_block(decision, "c hook: forbidden prompt");
        } else {
            cordon_session_add_context(decision, "c hook saw: %s", prompt);
            cordon_session_only_tools(decision, "echo");
        }
        free(prompt);
    } else if (strcmp(event->stage, "model-response") == 0) {
        cordon_session_drop_call(decision, "drop-me");
    } else if (strcmp(event->stage, "stop") == 0) {
        char *answer = NULL;
        long long continuations = 0;
        cordon_payload_int(event, "continuations", &continuations);
        if (cordon_payload_string(event, "answer", &answer) && !strstr(answer, "DONE") &&
            continuations == 0) {
            cordon_session_replace(decision, "c hook: finish with DONE");
        }
        free(answer);
    }
}

static const cordon_hook HOOK = {.stages = "prompt, model-response, stop", .session = decide};
CORDON_EXPORT_HOOK(HOOK)
