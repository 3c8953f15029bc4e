/* The hash plugin: the SHA-256 of a file in a directory the operator granted, written in C with
 * the cordon C SDK. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cordon.h"
#include "sha256.h"

static void hash_file(const cordon_call *call, cordon_result *result) {
    char *path = NULL;
    if (!cordon_arg_string(call, "path", &path)) {
        cordon_fail(result, "give the file to hash as \"path\"");
        return;
    }
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        int error = errno;
        if (error == ENOENT) {
            cordon_fail(result, "\"%s\" does not exist (or is outside the granted directories)", path);
        } else if (error == EACCES || error == EPERM || error == ENOTCAPABLE) {
            cordon_deny(result, "\"%s\" may not be read: %s; hash a file inside a granted directory",
                        path, strerror(error));
        } else if (error == EISDIR) {
            cordon_fail(result, "\"%s\" is a directory; give a file", path);
        } else {
            cordon_fail(result, "cannot open \"%s\": %s", path, strerror(error));
        }
        free(path);
        return;
    }
    sha256 h;
    sha256_init(&h);
    static unsigned char chunk[1 << 16];
    size_t got;
    unsigned long long size = 0;
    while ((got = fread(chunk, 1, sizeof chunk, file)) > 0) {
        sha256_update(&h, chunk, got);
        size += got;
        if (cordon_cancelled()) break;
    }
    int failed = ferror(file);
    fclose(file);
    if (failed) {
        cordon_fail(result, "reading \"%s\" failed (is it a directory?)", path);
        free(path);
        return;
    }
    unsigned char digest[32];
    sha256_finish(&h, digest);
    char hex[65];
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    cordon_textf(result, "%s  %s", hex, path);
    char *quoted = cordon_json_string(path);
    size_t room = strlen(quoted) + 128;
    char *details = malloc(room);
    if (details != NULL) {
        snprintf(details, room, "{\"sha256\": \"%s\", \"bytes\": %llu, \"path\": %s}", hex, size, quoted);
        cordon_details(result, details);
    }
    free(details);
    free(quoted);
    free(path);
}

static const cordon_tool TOOLS[] = {
    {
        .name = "hash",
        .label = "SHA-256 of a file",
        .description = "Computes the SHA-256 digest of a file in a granted directory, printed as "
                       "`hex  path` like sha256sum.",
        .parameters = "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\", "
                      "\"description\": \"The file, e.g. /data/report.pdf\"}}, "
                      "\"required\": [\"path\"], \"additionalProperties\": false, "
                      "\"examples\": [{\"path\": \"README.md\"}]}",
        .read_only = CORDON_YES,
        .idempotent = CORDON_YES,
        .open_world = CORDON_NO,
        .run = hash_file,
    },
};

CORDON_EXPORT_TOOLS(TOOLS)
