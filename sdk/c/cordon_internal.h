/* What the C SDK's files (see cordon.h) share and plugins never see: the generated bindings
 * (cordon_plugin.h, which `cordon build` generates from the contract), the result and decision
 * structures, and the helpers for memory and WIT strings (memory.c). Every string handed to the
 * host is a heap copy: the generated code frees it after the call returns. */

#ifndef CORDON_INTERNAL_H
#define CORDON_INTERNAL_H

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
    /* The structured output's JSON text, or NULL. */
    char *structured;
    bool failed;
    cordon_plugin_types_failure_kind_t kind;
    char *message;
    /* Whether anything was set (an after-hook replaces the result only then). */
    bool touched;
};

struct cordon_decision {
    enum { DECIDE_ALLOW, DECIDE_BLOCK, DECIDE_REWRITE, DECIDE_ASK } kind;
    char *text;
};

/* A session decision: NULL leaves that part alone; `only_tools` is comma-separated names. */
struct cordon_session_decision {
    char *block;
    char *replace;
    char *add_context;
    char *only_tools;
    /* NULL-terminated once anything was added. */
    char **drop_calls;
    size_t drop_count;
};


/* Aborts on NULL (an allocation failed): a plugin out of memory cannot answer anyway. */
void *cordon_checked(void *pointer);
/* A heap copy of `text`. */
char *cordon_copy_text(const char *text);
/* A WIT string as a new NUL-terminated heap string. */
char *cordon_from_wit(const wit_string *s);
/* A heap copy as a WIT string, which the generated code frees after the call. */
wit_string cordon_to_wit(const char *text);
/* A NULL-terminated array of strings as a WIT list of heap copies (NULL: an empty list). */
cordon_plugin_list_string_t cordon_to_wit_list(const char *const *items);
/* printf into a new heap string. */
char *cordon_vformat(const char *format, va_list args);
/* Comma-separated names as a WIT list of heap copies, blanks trimmed, empty names skipped. */
cordon_plugin_list_string_t cordon_names_to_wit(const char *names);
/* How many stages the contract has, and a stage's contract name ("" for none). */
cordon_plugin_types_session_stage_t cordon_stage_count(void);
const char *cordon_stage_name(cordon_plugin_types_session_stage_t stage);

#endif
