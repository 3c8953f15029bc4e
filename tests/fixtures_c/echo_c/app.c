/* Benchmark fixture: the trivial `echo` tool written with the C SDK, so the benchmark suite can set
 * a C call beside the Rust, Python and JavaScript ones (see host/benches/suite/). */
#include <stdlib.h>

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

static const cordon_tool TOOLS[] = {{
    .name = "echo",
    .description = "Returns the text it is given.",
    .parameters = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
    .run = echo,
}};

CORDON_EXPORT_TOOLS(TOOLS)
