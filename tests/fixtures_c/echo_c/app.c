/* Benchmark fixture: the trivial `echo` tool written with the C SDK, so the benchmark suite can set
 * a C call beside the Rust, Python and JavaScript ones (see host/benches/suite/); and `c_stats`,
 * which declares contract 0.2's title, hints, output schema, guidelines and locks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon.h"

static void echo(const cordon_call *call, cordon_result *result) {
    char *text = NULL;
    if (!cordon_arg_string(call, "text", &text)) {
        cordon_fail(result, "give the text to echo as \"text\"");
        return;
    }
    cordon_text(result, text);
    free(text);
}

/* Contract 0.2: structured output matching the declared output schema. */
static void stats(const cordon_call *call, cordon_result *result) {
    char *text = NULL;
    if (!cordon_arg_string(call, "text", &text)) {
        cordon_fail(result, "give the text as \"text\"");
        return;
    }
    size_t words = 0;
    bool in_word = false;
    for (const char *p = text; *p; p++) {
        bool blank = *p == ' ' || *p == '\n' || *p == '\t';
        if (!blank && !in_word) words++;
        in_word = !blank;
    }
    char json[96];
    snprintf(json, sizeof json, "{\"words\":%zu,\"characters\":%zu}", words, strlen(text));
    cordon_text(result, json);
    cordon_structured(result, json);
    free(text);
}

static const char *const STATS_GUIDELINES[] = {"Count words with c_stats.", NULL};
static const char *const STATS_LOCKS[] = {"/text", NULL};

static const cordon_tool TOOLS[] = {
    {
        .name = "echo",
        .description = "Returns the text it is given.",
        .parameters = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
        .run = echo,
    },
    {
        .name = "c_stats",
        .title = "Word statistics",
        .description = "Counts the words and characters of a text.",
        .parameters = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"words\":{\"type\":\"integer\"},"
                         "\"characters\":{\"type\":\"integer\"}},\"required\":[\"words\",\"characters\"]}",
        .read_only = CORDON_YES,
        .open_world = CORDON_NO,
        .guidelines = STATS_GUIDELINES,
        .locks = STATS_LOCKS,
        .run = stats,
    },
};

CORDON_EXPORT_TOOLS(TOOLS)
