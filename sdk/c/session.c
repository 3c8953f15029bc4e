/* The component's session-hook export (contract 0.3): the stage and payload handed to the plugin's
 * session function, and the decision it fills (cordon_session_block, _replace, _add_context,
 * _only_tools, _drop_call) turned into the contract's session-decision. The host calls it only at
 * the stages the hook declared. */

#include "cordon_internal.h"

static const char *const STAGE_NAMES[] = {
    [CORDON_PLUGIN_TYPES_SESSION_STAGE_SESSION_START] = "session-start",
    [CORDON_PLUGIN_TYPES_SESSION_STAGE_PROMPT] = "prompt",
    [CORDON_PLUGIN_TYPES_SESSION_STAGE_MODEL_REQUEST] = "model-request",
    [CORDON_PLUGIN_TYPES_SESSION_STAGE_MODEL_RESPONSE] = "model-response",
    [CORDON_PLUGIN_TYPES_SESSION_STAGE_COMPACTION] = "compaction",
    [CORDON_PLUGIN_TYPES_SESSION_STAGE_STOP] = "stop",
    [CORDON_PLUGIN_TYPES_SESSION_STAGE_SESSION_END] = "session-end",
};
#define STAGE_COUNT (sizeof STAGE_NAMES / sizeof STAGE_NAMES[0])

cordon_plugin_types_session_stage_t cordon_stage_count(void) { return STAGE_COUNT; }

const char *cordon_stage_name(cordon_plugin_types_session_stage_t stage) {
    return stage < STAGE_COUNT ? STAGE_NAMES[stage] : "";
}

static void set_text(char **slot, const char *format, va_list args) {
    free(*slot);
    *slot = cordon_vformat(format, args);
}

void cordon_session_block(cordon_session_decision *decision, const char *format, ...) {
    va_list args;
    va_start(args, format);
    set_text(&decision->block, format, args);
    va_end(args);
}

void cordon_session_replace(cordon_session_decision *decision, const char *format, ...) {
    va_list args;
    va_start(args, format);
    set_text(&decision->replace, format, args);
    va_end(args);
}

void cordon_session_add_context(cordon_session_decision *decision, const char *format, ...) {
    va_list args;
    va_start(args, format);
    set_text(&decision->add_context, format, args);
    va_end(args);
}

void cordon_session_only_tools(cordon_session_decision *decision, const char *names) {
    free(decision->only_tools);
    decision->only_tools = cordon_copy_text(names ? names : "");
}

void cordon_session_drop_call(cordon_session_decision *decision, const char *id) {
    decision->drop_calls = cordon_checked(
        realloc(decision->drop_calls, (decision->drop_count + 2) * sizeof *decision->drop_calls));
    decision->drop_calls[decision->drop_count++] = cordon_copy_text(id);
    decision->drop_calls[decision->drop_count] = NULL;
}

/* The payload as a call's arguments, so the argument readers read its top-level fields. */
static cordon_call payload_view(const cordon_session_event *event) {
    return (cordon_call){.id = "", .name = event->stage, .arguments = event->payload};
}

bool cordon_payload_string(const cordon_session_event *event, const char *key, char **out) {
    cordon_call view = payload_view(event);
    return cordon_arg_string(&view, key, out);
}

bool cordon_payload_int(const cordon_session_event *event, const char *key, long long *out) {
    cordon_call view = payload_view(event);
    return cordon_arg_int(&view, key, out);
}

static cordon_plugin_option_string_t optional(const char *text) {
    cordon_plugin_option_string_t option = {.is_some = text != NULL};
    if (text) option.val = cordon_to_wit(text);
    return option;
}

/* The comma-separated names as a WIT list of heap strings, blanks trimmed and empty names
 * skipped ("" is the empty list). */
cordon_plugin_list_string_t cordon_names_to_wit(const char *names) {
    size_t parts = 1;
    for (const char *p = names; *p; p++) parts += *p == ',';
    cordon_plugin_string_t *list = cordon_checked(calloc(parts, sizeof *list));
    size_t used = 0;
    const char *start = names;
    for (;;) {
        const char *end = strchr(start, ',');
        size_t length = end ? (size_t)(end - start) : strlen(start);
        while (length > 0 && *start == ' ') start++, length--;
        while (length > 0 && start[length - 1] == ' ') length--;
        if (length > 0) {
            char *name = cordon_checked(malloc(length + 1));
            memcpy(name, start, length);
            name[length] = '\0';
            list[used++] = cordon_to_wit(name);
            free(name);
        }
        if (end == NULL) break;
        start = end + 1;
    }
    return (cordon_plugin_list_string_t){.ptr = list, .len = used};
}

void exports_cordon_plugin_plugin_session_hook(exports_cordon_plugin_plugin_session_event_t *event,
                                               exports_cordon_plugin_plugin_session_decision_t *ret) {
    char *payload = cordon_from_wit(&event->payload);
    cordon_session_event view = {.stage = cordon_stage_name(event->stage), .payload = payload};
    exports_cordon_plugin_plugin_session_event_free(event);
    cordon_session_decision decision = {0};
    const cordon_hook *hook = cordon_plugin_hook();
    if (hook != NULL && hook->session != NULL) hook->session(&view, &decision);
    ret->block = optional(decision.block);
    ret->replace = optional(decision.replace);
    ret->add_context = optional(decision.add_context);
    ret->only_tools.is_some = decision.only_tools != NULL;
    if (decision.only_tools) ret->only_tools.val = cordon_names_to_wit(decision.only_tools);
    ret->drop_calls = cordon_to_wit_list((const char *const *)decision.drop_calls);
    free(decision.block);
    free(decision.replace);
    free(decision.add_context);
    free(decision.only_tools);
    for (size_t i = 0; i < decision.drop_count; i++) free(decision.drop_calls[i]);
    free(decision.drop_calls);
    free(payload);
}
