/* The component's hook exports: before-tool-call (allow, cordon_block, cordon_rewrite, cordon_ask) and
 * after-tool-call (keep, or a replacement built like a result). The host calls them only for the
 * tools the hook's globs match. */

#include "cordon_internal.h"

/* Sets a decision that carries printf-formatted text (a block's or an ask's reason). */
static void decide_with_reason(cordon_decision *decision, int kind, const char *format,
                               va_list args) {
    free(decision->text);
    decision->kind = kind;
    decision->text = cordon_vformat(format, args);
}

void cordon_block(cordon_decision *decision, const char *format, ...) {
    va_list args;
    va_start(args, format);
    decide_with_reason(decision, DECIDE_BLOCK, format, args);
    va_end(args);
}

void cordon_rewrite(cordon_decision *decision, const char *arguments_json) {
    free(decision->text);
    decision->kind = DECIDE_REWRITE;
    decision->text = cordon_copy_text(arguments_json);
}

void cordon_ask(cordon_decision *decision, const char *format, ...) {
    va_list args;
    va_start(args, format);
    decide_with_reason(decision, DECIDE_ASK, format, args);
    va_end(args);
}

void exports_cordon_plugin_plugin_before_tool_call(exports_cordon_plugin_plugin_tool_call_t *call,
                                                   exports_cordon_plugin_plugin_before_decision_t *ret) {
    cordon_call view = {.id = cordon_from_wit(&call->id),
                        .name = cordon_from_wit(&call->name),
                        .arguments = cordon_from_wit(&call->arguments)};
    exports_cordon_plugin_plugin_tool_call_free(call);
    cordon_decision decision = {DECIDE_ALLOW, NULL};
    const cordon_hook *hook = cordon_plugin_hook();
    if (hook != NULL && hook->before != NULL) hook->before(&view, &decision);
    if (decision.kind == DECIDE_BLOCK) {
        ret->tag = CORDON_PLUGIN_TYPES_BEFORE_DECISION_BLOCK;
        ret->val.block = cordon_to_wit(decision.text);
    } else if (decision.kind == DECIDE_REWRITE) {
        ret->tag = CORDON_PLUGIN_TYPES_BEFORE_DECISION_REWRITE;
        ret->val.rewrite = cordon_to_wit(decision.text);
    } else if (decision.kind == DECIDE_ASK) {
        ret->tag = CORDON_PLUGIN_TYPES_BEFORE_DECISION_ASK;
        ret->val.ask = cordon_to_wit(decision.text);
    } else {
        ret->tag = CORDON_PLUGIN_TYPES_BEFORE_DECISION_ALLOW;
    }
    free(decision.text);
    free((char *)view.id);
    free((char *)view.name);
    free((char *)view.arguments);
}

void exports_cordon_plugin_plugin_after_tool_call(exports_cordon_plugin_plugin_tool_call_t *call,
                                                  exports_cordon_plugin_plugin_tool_result_t *outcome,
                                                  exports_cordon_plugin_plugin_after_decision_t *ret) {
    cordon_call view = {.id = cordon_from_wit(&call->id),
                        .name = cordon_from_wit(&call->name),
                        .arguments = cordon_from_wit(&call->arguments)};
    exports_cordon_plugin_plugin_tool_call_free(call);
    size_t length = 0;
    for (size_t i = 0; i < outcome->content.len; i++) {
        if (outcome->content.ptr[i].tag == CORDON_PLUGIN_TYPES_CONTENT_TEXT) {
            length += outcome->content.ptr[i].val.text.len + 1;
        }
    }
    char *text = cordon_checked(malloc(length + 1));
    char *at = text;
    for (size_t i = 0; i < outcome->content.len; i++) {
        if (outcome->content.ptr[i].tag != CORDON_PLUGIN_TYPES_CONTENT_TEXT) continue;
        const wit_string *block = &outcome->content.ptr[i].val.text;
        if (at != text) *at++ = '\n';
        memcpy(at, block->ptr, block->len);
        at += block->len;
    }
    *at = '\0';
    char *details = cordon_from_wit(&outcome->details);
    char *structured = outcome->structured.is_some ? cordon_from_wit(&outcome->structured.val)
                                                   : cordon_copy_text("");
    cordon_outcome seen = {
        .text = text, .details = details, .is_error = outcome->is_error, .structured = structured};
    exports_cordon_plugin_plugin_tool_result_free(outcome);

    cordon_result replacement = {0};
    const cordon_hook *hook = cordon_plugin_hook();
    if (hook != NULL && hook->after != NULL) hook->after(&view, &seen, &replacement);
    if (!replacement.touched) {
        ret->tag = CORDON_PLUGIN_TYPES_AFTER_DECISION_KEEP;
    } else {
        if (replacement.failed) cordon_text(&replacement, replacement.message);
        ret->tag = CORDON_PLUGIN_TYPES_AFTER_DECISION_REPLACE;
        ret->val.replace.content.ptr = replacement.blocks;
        ret->val.replace.content.len = replacement.count;
        ret->val.replace.details = cordon_to_wit(replacement.details ? replacement.details : "");
        ret->val.replace.is_error = replacement.failed;
        ret->val.replace.structured.is_some = replacement.structured != NULL;
        if (replacement.structured) ret->val.replace.structured.val = cordon_to_wit(replacement.structured);
    }
    free(replacement.details);
    free(replacement.structured);
    free(structured);
    free(replacement.message);
    free(text);
    free(details);
    free((char *)view.id);
    free((char *)view.name);
    free((char *)view.arguments);
}
