/* Reading the call's arguments: a small reader for the top-level fields of the arguments object
 * (the host validated it against the tool's schema, so it is well-formed JSON), behind
 * cordon_arg_string, cordon_arg_int and cordon_arg_bool. */

#include "cordon_internal.h"

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

/* Decodes the JSON string at `p` (its opening quote) into a new malloc'd string; an escaped NUL
 * is decoded as U+FFFD (the replacement character). */
static char *decode_string(const char *p) {
    const char *end = skip_string(p);
    char *out = cordon_checked(malloc((size_t)(end - p) + 1));
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
            /* A C string ends at NUL: an escaped NUL becomes U+FFFD, so what follows it is still
             * read (a hook shown "hello\u0000 rm -rf ~" sees all of it). */
            put_utf8(&o, code == 0 ? 0xFFFD : code);
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
