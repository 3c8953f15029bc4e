/* Test fixture: a hook written with the C SDK. The before-hook blocks `echo` calls whose arguments
 * say "forbidden", rewrites ones that say "shout" to fixed arguments and asks for a person's
 * approval of ones that start with "ask" (contract 0.2); the after-hook tags every `echo` result
 * with its text and a flag in the details. */
#include <stdlib.h>
#include <string.h>

#include "cordon.h"

static void police(const cordon_call *call, cordon_decision *decision) {
    char *text = NULL;
    if (!cordon_arg_string(call, "text", &text)) return;
    if (strstr(text, "forbidden") != NULL) {
        cordon_block(decision, "the C hook does not allow that word (in %s)", call->name);
    } else if (strncmp(text, "shout", 5) == 0) {
        cordon_rewrite(decision, "{\"text\": \"SHOUTED BY C\"}");
    } else if (strncmp(text, "ask", 3) == 0) {
        cordon_ask(decision, "the C hook wants a person to see %s", call->name);
    }
    free(text);
}

static void tag(const cordon_call *call, const cordon_outcome *outcome, cordon_result *replacement) {
    (void)call;
    cordon_textf(replacement, "%s [seen by c%s]", outcome->text, outcome->is_error ? ", an error" : "");
    cordon_details(replacement, "{\"tagged\": true}");
}

static const cordon_hook HOOK = {.tools = "echo", .before = police, .after = tag};

CORDON_EXPORT_HOOK(HOOK)
