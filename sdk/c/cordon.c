/* The cordon C SDK's implementation (see cordon.h): the component's exports (describe, execute and
 * the hook calls) over the bindings `wit-bindgen c` generates (cordon_plugin.h), a small reader for
 * the top-level fields of the arguments object, and the host's imports. Every string handed to
 * the host is a heap copy: the generated code frees it after the call returns. */

#include "cordon.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon_plugin.h"

typedef cordon_plugin_string_t wit_string;

struct cordon_result {
    cordon_plugin_types_content_t *blocks;
    size_t count;
    char *details;
    bool failed;
    cordon_plugin_types_failure_kind_t kind;
    char *message;
    /* Whether anything was set (an after-hook replaces the result only then). */
    bool touched;
};

struct cordon_decision {
    enum { DECIDE_ALLOW, DECIDE_BLOCK, DECIDE_REWRITE } kind;
    char *text;
};

/* Plugins without tools or without a hook: these weak defaults stand in for the macros. */
__attribute__((weak)) const cordon_tool *cordon_plugin_tools(size_t *count) {
    *count = 0;
    return NULL;
}

__attribute__((weak)) const cordon_hook *cordon_plugin_hook(void) {
    return NULL;
}

static void *checked(void *pointer) {
    if (pointer == NULL) abort();
    return pointer;
}

static char *copy_text(const char *text) {
    return strcpy(checked(malloc(strlen(text) + 1)), text);
}

static char *from_wit(const wit_string *s) {
    char *out = checked(malloc(s->len + 1));
    memcpy(out, s->ptr, s->len);
    out[s->len] = '\0';
    return out;
}

/* A heap copy as a WIT string, which the generated code frees after the call. */
static wit_string to_wit(const char *text) {
    wit_string s;
    s.len = strlen(text);
    s.ptr = (uint8_t *)checked(malloc(s.len ? s.len : 1));
    memcpy(s.ptr, text, s.len);
    return s;
}

static char *vformat(const char *format, va_list args) {
    va_list again;
    va_copy(again, args);
    int length = vsnprintf(NULL, 0, format, args);
    char *out = checked(malloc(length > 0 ? (size_t)length + 1 : 1));
    vsnprintf(out, length > 0 ? (size_t)length + 1 : 1, format, again);
    va_end(again);
    return out;
}

/* --- Reading the arguments object ---------------------------------------------------------- */

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* Skips one JSON string starting at its opening quote; returns the position after it. */
static const char *skip_string(const char *p) {
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) p++;
    }
    return *p ? p + 1 : p;
}

/* Skips one JSON value (the host validated the document, so it is well formed). */
static const char *skip_value(const char *p) {
    p = skip_space(p);
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; *p; p++) {
            if (*p == '"') {
                p = skip_string(p) - 1;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if ((*p == '}' || *p == ']') && --depth == 0) {
                return p + 1;
            }
        }
        return p;
    }
    while (*p && *p != ',' && *p != '}' && *p != ']') p++;
    return p;
}

static void put_utf8(char **out, unsigned long code) {
    char *o = *out;
    if (code < 0x80) {
        *o++ = (char)code;
    } else if (code < 0x800) {
        *o++ = (char)(0xC0 | (code >> 6));
        *o++ = (char)(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        *o++ = (char)(0xE0 | (code >> 12));
        *o++ = (char)(0x80 | ((code >> 6) & 0x3F));
        *o++ = (char)(0x80 | (code & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (code >> 18));
        *o++ = (char)(0x80 | ((code >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((code >> 6) & 0x3F));
        *o++ = (char)(0x80 | (code & 0x3F));
    }
    *out = o;
}

static unsigned long hex4(const char *p) {
    char digits[5] = {0};
    memcpy(digits, p, 4);
    return strtoul(digits, NULL, 16);
}

/* Decodes the JSON string at `p` (its opening quote) into a new malloc'd string. */
static char *decode_string(const char *p) {
    const char *end = skip_string(p);
    char *out = checked(malloc((size_t)(end - p) + 1));
    char *o = out;
    for (p++; *p && *p != '"'; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        p++;
        switch (*p) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {
            unsigned long code = hex4(p + 1);
            p += 4;
            if (code >= 0xD800 && code < 0xDC00 && p[1] == '\\' && p[2] == 'u') {
                unsigned long low = hex4(p + 3);
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                p += 6;
            }
            put_utf8(&o, code);
            break;
        }
        default: *o++ = *p; break; /* \" \\ \/ */
        }
    }
    *o = '\0';
    return out;
}

/* The value of top-level field `key` in the arguments object, or NULL. */
static const char *find_field(const cordon_call *call, const char *key) {
    const char *p = skip_space(call->arguments);
    if (*p != '{') return NULL;
    p = skip_space(p + 1);
    while (*p == '"') {
        char *name = decode_string(p);
        bool match = strcmp(name, key) == 0;
        free(name);
        p = skip_space(skip_string(p));
        if (*p != ':') return NULL;
        p = skip_space(p + 1);
        if (match) return p;
        p = skip_space(skip_value(p));
        if (*p != ',') return NULL;
        p = skip_space(p + 1);
    }
    return NULL;
}

bool cordon_arg_string(const cordon_call *call, const char *key, char **out) {
    const char *value = find_field(call, key);
    if (value == NULL || *value != '"') return false;
    *out = decode_string(value);
    return true;
}

bool cordon_arg_int(const cordon_call *call, const char *key, long long *out) {
    const char *value = find_field(call, key);
    if (value == NULL) return false;
    char *end = NULL;
    long long number = strtoll(value, &end, 10);
    if (end == value || *end == '.' || *end == 'e' || *end == 'E') return false;
    *out = number;
    return true;
}

bool cordon_arg_bool(const cordon_call *call, const char *key, bool *out) {
    const char *value = find_field(call, key);
    if (value != NULL && strncmp(value, "true", 4) == 0) {
        *out = true;
        return true;
    }
    if (value != NULL && strncmp(value, "false", 5) == 0) {
        *out = false;
        return true;
    }
    return false;
}

/* --- Results ------------------------------------------------------------------------------ */

void cordon_text(cordon_result *result, const char *text) {
    result->blocks = checked(realloc(result->blocks, (result->count + 1) * sizeof *result->blocks));
    cordon_plugin_types_content_t *block = &result->blocks[result->count++];
    block->tag = CORDON_PLUGIN_TYPES_CONTENT_TEXT;
    block->val.text = to_wit(text);
    result->touched = true;
}

void cordon_textf(cordon_result *result, const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *text = vformat(format, args);
    va_end(args);
    cordon_text(result, text);
    free(text);
}

void cordon_details(cordon_result *result, const char *json_object) {
    free(result->details);
    result->details = copy_text(json_object);
    result->touched = true;
}

static void fail_as(cordon_result *result, cordon_plugin_types_failure_kind_t kind,
                    const char *format, va_list args) {
    free(result->message);
    result->failed = true;
    result->touched = true;
    result->kind = kind;
    result->message = vformat(format, args);
}

void cordon_fail(cordon_result *result, const char *format, ...) {
    va_list args;
    va_start(args, format);
    fail_as(result, CORDON_PLUGIN_TYPES_FAILURE_KIND_TOOL_ERROR, format, args);
    va_end(args);
}

void cordon_deny(cordon_result *result, const char *format, ...) {
    va_list args;
    va_start(args, format);
    fail_as(result, CORDON_PLUGIN_TYPES_FAILURE_KIND_CAPABILITY_DENIED, format, args);
    va_end(args);
}

char *cordon_json_string(const char *text) {
    size_t length = strlen(text);
    char *out = checked(malloc(length * 6 + 3));
    char *o = out;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') {
            *o++ = '\\';
            *o++ = (char)*p;
        } else if (*p == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        } else if (*p < 0x20) {
            o += sprintf(o, "\\u%04x", *p);
        } else {
            *o++ = (char)*p;
        }
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

/* --- Host services ------------------------------------------------------------------------- */

void cordon_log(cordon_level level, const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *text = vformat(format, args);
    va_end(args);
    wit_string message = to_wit(text);
    free(text);
    cordon_plugin_host_log((cordon_plugin_host_level_t)level, &message);
    cordon_plugin_string_free(&message);
}

void cordon_progress(const char *text) {
    cordon_plugin_types_content_t block;
    block.tag = CORDON_PLUGIN_TYPES_CONTENT_TEXT;
    block.val.text = to_wit(text);
    cordon_plugin_host_tool_output_t update;
    update.content.ptr = &block;
    update.content.len = 1;
    update.details = to_wit("");
    cordon_plugin_host_progress(&update);
    cordon_plugin_string_free(&block.val.text);
    cordon_plugin_string_free(&update.details);
}

bool cordon_cancelled(void) {
    return cordon_plugin_host_cancelled();
}

char *cordon_settings(void) {
    cordon_plugin_host_json_t settings;
    cordon_plugin_host_settings(&settings);
    char *out = settings.len ? from_wit(&settings) : copy_text("{}");
    cordon_plugin_host_json_free(&settings);
    return out;
}

/* --- The component's exports --------------------------------------------------------------- */

void exports_cordon_plugin_plugin_describe(exports_cordon_plugin_plugin_plugin_info_t *ret) {
    size_t count = 0;
    const cordon_tool *tools = cordon_plugin_tools(&count);
    ret->tools.len = count;
    ret->tools.ptr = checked(calloc(count ? count : 1, sizeof *ret->tools.ptr));
    for (size_t i = 0; i < count; i++) {
        cordon_plugin_types_tool_spec_t *spec = &ret->tools.ptr[i];
        spec->name = to_wit(tools[i].name);
        spec->label = to_wit(tools[i].label ? tools[i].label : tools[i].name);
        spec->description = to_wit(tools[i].description ? tools[i].description : "");
        spec->parameters = to_wit(tools[i].parameters ? tools[i].parameters
                                                      : "{\"type\":\"object\",\"properties\":{}}");
        spec->execution_mode = tools[i].sequential ? CORDON_PLUGIN_TYPES_EXECUTION_MODE_SEQUENTIAL
                                                   : CORDON_PLUGIN_TYPES_EXECUTION_MODE_PARALLEL;
    }
    const cordon_hook *hook = cordon_plugin_hook();
    ret->hook.is_some = hook != NULL;
    if (hook == NULL) return;
    /* The comma-separated globs become the hook-spec's list. */
    const char *globs = hook->tools ? hook->tools : "";
    size_t parts = 0;
    for (const char *p = globs; *p; p++) parts += *p == ',';
    cordon_plugin_string_t *list = checked(calloc(parts + 1, sizeof *list));
    size_t used = 0;
    const char *start = globs;
    for (;;) {
        const char *end = strchr(start, ',');
        size_t length = end ? (size_t)(end - start) : strlen(start);
        while (length > 0 && *start == ' ') start++, length--;
        while (length > 0 && start[length - 1] == ' ') length--;
        if (length > 0) {
            char *glob = checked(malloc(length + 1));
            memcpy(glob, start, length);
            glob[length] = '\0';
            list[used++] = to_wit(glob);
            free(glob);
        }
        if (end == NULL) break;
        start = end + 1;
    }
    ret->hook.val.tools.ptr = list;
    ret->hook.val.tools.len = used;
    ret->hook.val.before = hook->before != NULL;
    ret->hook.val.after = hook->after != NULL;
}

bool exports_cordon_plugin_plugin_execute(exports_cordon_plugin_plugin_tool_call_t *call,
                                          exports_cordon_plugin_plugin_tool_output_t *ret,
                                          exports_cordon_plugin_plugin_tool_failure_t *err) {
    char *id = from_wit(&call->id);
    char *name = from_wit(&call->name);
    char *arguments = from_wit(&call->arguments);
    exports_cordon_plugin_plugin_tool_call_free(call);
    cordon_call view = {.id = id, .name = name, .arguments = arguments};
    cordon_result result = {0};

    size_t count = 0;
    const cordon_tool *tools = cordon_plugin_tools(&count);
    const cordon_tool *tool = NULL;
    for (size_t i = 0; i < count && tool == NULL; i++) {
        if (strcmp(tools[i].name, name) == 0) tool = &tools[i];
    }
    if (tool == NULL) {
        cordon_fail(&result, "this plugin has no tool named \"%s\"", name);
    } else {
        tool->run(&view, &result);
    }
    free(id);
    free(name);
    free(arguments);

    if (result.failed) {
        err->kind = result.kind;
        err->message = to_wit(result.message);
        err->details = to_wit(result.details ? result.details : "");
        for (size_t i = 0; i < result.count; i++) cordon_plugin_types_content_free(&result.blocks[i]);
        free(result.blocks);
        free(result.message);
        free(result.details);
        return false;
    }
    ret->content.ptr = result.blocks;
    ret->content.len = result.count;
    ret->details = to_wit(result.details ? result.details : "");
    free(result.details);
    return true;
}

void cordon_block(cordon_decision *decision, const char *format, ...) {
    va_list args;
    va_start(args, format);
    free(decision->text);
    decision->kind = DECIDE_BLOCK;
    decision->text = vformat(format, args);
    va_end(args);
}

void cordon_rewrite(cordon_decision *decision, const char *arguments_json) {
    free(decision->text);
    decision->kind = DECIDE_REWRITE;
    decision->text = copy_text(arguments_json);
}

/* The host calls the hook exports only for the tools the hook's globs match (see describe). */
void exports_cordon_plugin_plugin_before_tool_call(exports_cordon_plugin_plugin_tool_call_t *call,
                                                   exports_cordon_plugin_plugin_before_decision_t *ret) {
    cordon_call view = {.id = from_wit(&call->id),
                        .name = from_wit(&call->name),
                        .arguments = from_wit(&call->arguments)};
    exports_cordon_plugin_plugin_tool_call_free(call);
    cordon_decision decision = {DECIDE_ALLOW, NULL};
    const cordon_hook *hook = cordon_plugin_hook();
    if (hook != NULL && hook->before != NULL) hook->before(&view, &decision);
    if (decision.kind == DECIDE_BLOCK) {
        ret->tag = CORDON_PLUGIN_TYPES_BEFORE_DECISION_BLOCK;
        ret->val.block = to_wit(decision.text);
    } else if (decision.kind == DECIDE_REWRITE) {
        ret->tag = CORDON_PLUGIN_TYPES_BEFORE_DECISION_REWRITE;
        ret->val.rewrite = to_wit(decision.text);
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
    cordon_call view = {.id = from_wit(&call->id),
                        .name = from_wit(&call->name),
                        .arguments = from_wit(&call->arguments)};
    exports_cordon_plugin_plugin_tool_call_free(call);
    size_t length = 0;
    for (size_t i = 0; i < outcome->content.len; i++) {
        if (outcome->content.ptr[i].tag == CORDON_PLUGIN_TYPES_CONTENT_TEXT) {
            length += outcome->content.ptr[i].val.text.len + 1;
        }
    }
    char *text = checked(malloc(length + 1));
    char *at = text;
    for (size_t i = 0; i < outcome->content.len; i++) {
        if (outcome->content.ptr[i].tag != CORDON_PLUGIN_TYPES_CONTENT_TEXT) continue;
        const wit_string *block = &outcome->content.ptr[i].val.text;
        if (at != text) *at++ = '\n';
        memcpy(at, block->ptr, block->len);
        at += block->len;
    }
    *at = '\0';
    char *details = from_wit(&outcome->details);
    cordon_outcome seen = {.text = text, .details = details, .is_error = outcome->is_error};
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
        ret->val.replace.details = to_wit(replacement.details ? replacement.details : "");
        ret->val.replace.is_error = replacement.failed;
    }
    free(replacement.details);
    free(replacement.message);
    free(text);
    free(details);
    free((char *)view.id);
    free((char *)view.name);
    free((char *)view.arguments);
}
