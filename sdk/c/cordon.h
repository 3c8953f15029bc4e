/* The cordon C SDK: write tools as plain C functions over NUL-terminated strings, list them with
 * CORDON_EXPORT_TOOLS (and a hook with CORDON_EXPORT_HOOK), and `cordon build` (Zig's clang for
 * wasm32-wasi, then wit-component) makes the component. This header hides the bindings `wit-bindgen c` generates from the
 * contract (wit/plugin-0.3.0); the .c files beside it implement it over them.
 *
 *     static void greet(const cordon_call *call, cordon_result *result) {
 *         char *name = NULL;
 *         if (!cordon_arg_string(call, "name", &name)) { cordon_fail(result, "no name"); return; }
 *         cordon_textf(result, "Hello, %s!", name);
 *         free(name);
 *     }
 *     static const cordon_tool TOOLS[] = {{ .name = "greet", .description = "Says hello.",
 *         .parameters = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}",
 *         .run = greet }};
 *     CORDON_EXPORT_TOOLS(TOOLS)
 *
 * Files: the directories the operator granted are visible at their guest paths; use stdio
 * (fopen) as usual. Each call runs in a fresh sandbox, so memory need not be freed carefully.
 */
#ifndef CORDON_H
#define CORDON_H

#include <stdbool.h>
#include <stddef.h>

/* One tool call: its id, the tool's name and its arguments (a JSON object the host has already
 * validated against the tool's schema). */
typedef struct cordon_call {
    const char *id;
    const char *name;
    const char *arguments;
} cordon_call;

/* What a tool answers: text blocks and details, or a failure. Fill it with the functions below. */
typedef struct cordon_result cordon_result;

typedef void (*cordon_tool_fn)(const cordon_call *call, cordon_result *result);

/* A hint about what a tool does (MCP's tool annotations): left unsaid, yes or no. */
typedef enum cordon_hint { CORDON_UNSAID = 0, CORDON_YES, CORDON_NO } cordon_hint;

/* One tool. `title` (or `label`) defaults to the name; `parameters` (JSON Schema text) to an empty
 * object. Everything after `sequential` is optional (contract 0.2). */
typedef struct cordon_tool {
    const char *name;
    const char *label;
    const char *description;
    const char *parameters;
    cordon_tool_fn run;
    /* Set when the tool must not run beside other calls of its batch (prefer `locks`). */
    bool sequential;
    /* A short human title ("Count words"); `label` is its older name. */
    const char *title;
    /* JSON Schema text of the structured output; then every successful call must give one with
     * cordon_structured. */
    const char *output_schema;
    /* Hints for clients deciding whether to ask a person first. */
    cordon_hint read_only, destructive, idempotent, open_world;
    /* NULL-terminated lines the agent loop adds to its system prompt while the tool is active. */
    const char *const *guidelines;
    /* NULL-terminated JSON pointers into the arguments naming what a call touches ("/path"). */
    const char *const *locks;
} cordon_tool;

/* Registers the plugin's tools: `CORDON_EXPORT_TOOLS(TOOLS)` after `static const cordon_tool
 * TOOLS[] = {...};`, once per plugin. */
#define CORDON_EXPORT_TOOLS(array)                                   \
    const cordon_tool *cordon_plugin_tools(size_t *count) {          \
        *count = sizeof(array) / sizeof((array)[0]);                 \
        return (array);                                              \
    }

/* Defined by CORDON_EXPORT_TOOLS (by default: no tools). */
const cordon_tool *cordon_plugin_tools(size_t *count);

/* --- Hooks ------------------------------------------------------------------------------- */

/* What a before-hook decides; untouched, the call runs as it is. */
typedef struct cordon_decision cordon_decision;
/* Refuses the call; the printf-formatted reason goes back to the model. */
void cordon_block(cordon_decision *decision, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Runs the call with these arguments (JSON object text, copied) instead. */
void cordon_rewrite(cordon_decision *decision, const char *arguments_json);
/* Runs the call only if a person approves it; the printf-formatted reason is shown to them. */
void cordon_ask(cordon_decision *decision, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* A call's result as an after-hook sees it: its text blocks joined by newlines, its details
 * (JSON object text, or "" for none), whether it is an error, and its structured output (JSON
 * object text, or "" for none). */
typedef struct cordon_outcome {
    const char *text;
    const char *details;
    bool is_error;
    const char *structured;
} cordon_outcome;

typedef void (*cordon_before_fn)(const cordon_call *call, cordon_decision *decision);
/* Fill `replacement` (cordon_text, cordon_details, cordon_fail) to replace the result; leave it
 * untouched to keep it. A failed replacement is an error result carrying the message. */
typedef void (*cordon_after_fn)(const cordon_call *call, const cordon_outcome *outcome,
                                cordon_result *replacement);

/* --- Session hooks (docs/session-hooks.md) ----------------------------------------------- */

/* One stage of a session: its contract name ("prompt", "model-request", ...) and its payload, a
 * JSON object whose fields depend on the stage (texts cut to the documented bounds, secrets
 * masked). */
typedef struct cordon_session_event {
    const char *stage;
    const char *payload;
} cordon_session_event;
/* What a session hook decides; untouched, the stage proceeds. A part the stage does not take
 * makes the host stop the turn (it fails closed). */
typedef struct cordon_session_decision cordon_session_decision;
/* Stops the turn; the printf-formatted reason is shown to the user (prompt, model-request). */
void cordon_session_block(cordon_session_decision *decision, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* The new prompt (prompt), reply text (model-response), summary (compaction, before) or the
 * message to continue the turn with (stop), printf-formatted. */
void cordon_session_replace(cordon_session_decision *decision, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Context for the next model request (session-start, prompt, model-request). */
void cordon_session_add_context(cordon_session_decision *decision, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Offer only these tools or groups, comma-separated ("" offers none) (prompt, model-request). */
void cordon_session_only_tools(cordon_session_decision *decision, const char *names);
/* Drops the reply's call with this id (model-response); call once per call to drop. */
void cordon_session_drop_call(cordon_session_decision *decision, const char *id);
/* A top-level string or integer field of the payload, as cordon_arg_string and cordon_arg_int. */
bool cordon_payload_string(const cordon_session_event *event, const char *key, char **out);
bool cordon_payload_int(const cordon_session_event *event, const char *key, long long *out);

typedef void (*cordon_session_fn)(const cordon_session_event *event,
                                  cordon_session_decision *decision);

/* A hook: the tool-name globs it watches (comma-separated, `*` and `?`; NULL or "" for every
 * tool), a before-function, an after-function or both; and the session stages it watches
 * (comma-separated contract names, "prompt,stop") with the function called at each. */
typedef struct cordon_hook {
    const char *tools;
    cordon_before_fn before;
    cordon_after_fn after;
    const char *stages;
    cordon_session_fn session;
} cordon_hook;

/* Registers the plugin's hook: `CORDON_EXPORT_HOOK(HOOK)` after `static const cordon_hook HOOK =
 * {...};`. A plugin may have tools, a hook, or both. */
#define CORDON_EXPORT_HOOK(hook)                                     \
    const cordon_hook *cordon_plugin_hook(void) { return &(hook); }

/* Defined by CORDON_EXPORT_HOOK (by default: no hook). */
const cordon_hook *cordon_plugin_hook(void);

/* --- Arguments: top-level fields of the call's JSON object ------------------------------- */

/* A string field, unescaped, as a new malloc'd string in *out. False when absent or not a string. */
bool cordon_arg_string(const cordon_call *call, const char *key, char **out);
/* An integer field. False when absent or not an integer. */
bool cordon_arg_int(const cordon_call *call, const char *key, long long *out);
/* A boolean field. False when absent or not a boolean. */
bool cordon_arg_bool(const cordon_call *call, const char *key, bool *out);

/* --- Results ------------------------------------------------------------------------------ */

/* Appends a text block (copied). */
void cordon_text(cordon_result *result, const char *text);
/* Appends a text block made with printf formatting. */
void cordon_textf(cordon_result *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Sets the details: JSON object text for UIs and logs (copied). */
void cordon_details(cordon_result *result, const char *json_object);
/* Sets the structured output: JSON object text matching the tool's output schema (copied). Put a
 * text rendering in a text block too: not every client reads structured output. */
void cordon_structured(cordon_result *result, const char *json_object);
/* Fails the call as `tool_error` with a printf-formatted message. */
void cordon_fail(cordon_result *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Fails the call as `capability_denied`: it needed something the operator did not grant. */
void cordon_deny(cordon_result *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* A JSON string literal (quoted and escaped) for `text`, as a new malloc'd string. */
char *cordon_json_string(const char *text);

/* --- Host services ------------------------------------------------------------------------- */

typedef enum cordon_level {
    CORDON_TRACE,
    CORDON_DEBUG,
    CORDON_INFO,
    CORDON_WARN,
    CORDON_ERROR
} cordon_level;

/* Writes a line to the host's log. */
void cordon_log(cordon_level level, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Streams partial output of the current call to the user interface. */
void cordon_progress(const char *text);
/* Whether the current call was cancelled; long loops should check it and stop. */
bool cordon_cancelled(void);
/* The plugin's settings from cordon.toml, as JSON object text (malloc'd). */
char *cordon_settings(void);

#endif
