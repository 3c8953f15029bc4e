/* Building a tool's result: text blocks, structured output, details, failures (tool_error, capability_denied) and
 * JSON string quoting. */

#include "cordon_internal.h"

void cordon_text(cordon_result *result, const char *text) {
    result->blocks = cordon_checked(realloc(result->blocks, (result->count + 1) * sizeof *result->blocks));
    cordon_plugin_types_content_t *block = &result->blocks[result->count++];
    block->tag = CORDON_PLUGIN_TYPES_CONTENT_TEXT;
    block->val.text = cordon_to_wit(text);
    result->touched = true;
}

void cordon_textf(cordon_result *result, const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *text = cordon_vformat(format, args);
    va_end(args);
    cordon_text(result, text);
    free(text);
}

void cordon_structured(cordon_result *result, const char *json_object) {
    free(result->structured);
    result->structured = cordon_copy_text(json_object);
    result->touched = true;
}

void cordon_details(cordon_result *result, const char *json_object) {
    free(result->details);
    result->details = cordon_copy_text(json_object);
    result->touched = true;
}

static void fail_as(cordon_result *result, cordon_plugin_types_failure_kind_t kind,
                    const char *format, va_list args) {
    free(result->message);
    result->failed = true;
    result->touched = true;
    result->kind = kind;
    result->message = cordon_vformat(format, args);
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
    char *out = cordon_checked(malloc(length * 6 + 3));
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
