/* Test fixture: a tool that reads a file with plain stdio (`fopen`), as any author would, so a
 * read outside the plugin's grants is seen as such a plugin sees it (outside_grants.rs). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon.h"

static void read_file(const cordon_call *call, cordon_result *result) {
    char *path = NULL;
    if (!cordon_arg_string(call, "path", &path)) {
        cordon_fail(result, "give the file as \"path\"");
        return;
    }
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        cordon_fail(result, "cannot read %s: %s", path, strerror(errno));
        free(path);
        return;
    }
    char text[4096];
    size_t length = fread(text, 1, sizeof text - 1, file);
    text[length] = '\0';
    fclose(file);
    cordon_text(result, text);
    free(path);
}

static const cordon_tool TOOLS[] = {
    {
        .name = "c_read",
        .description = "Reads a text file with fopen.",
        .parameters = "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}, \"required\": [\"path\"]}",
        .run = read_file,
    },
};

CORDON_EXPORT_TOOLS(TOOLS)
