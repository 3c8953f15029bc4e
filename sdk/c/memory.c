/* The C SDK's memory helpers: checked allocation, heap copies, and conversions between C strings
 * and WIT strings (see cordon_internal.h). */

#include "cordon_internal.h"

void *cordon_checked(void *pointer) {
    if (pointer == NULL) abort();
    return pointer;
}

char *cordon_copy_text(const char *text) {
    return strcpy(cordon_checked(malloc(strlen(text) + 1)), text);
}

char *cordon_from_wit(const wit_string *s) {
    char *out = cordon_checked(malloc(s->len + 1));
    memcpy(out, s->ptr, s->len);
    out[s->len] = '\0';
    return out;
}

wit_string cordon_to_wit(const char *text) {
    wit_string s;
    s.len = strlen(text);
    s.ptr = (uint8_t *)cordon_checked(malloc(s.len ? s.len : 1));
    memcpy(s.ptr, text, s.len);
    return s;
}

char *cordon_vformat(const char *format, va_list args) {
    va_list again;
    va_copy(again, args);
    int length = vsnprintf(NULL, 0, format, args);
    char *out = cordon_checked(malloc(length > 0 ? (size_t)length + 1 : 1));
    vsnprintf(out, length > 0 ? (size_t)length + 1 : 1, format, again);
    va_end(again);
    return out;
}

cordon_plugin_list_string_t cordon_to_wit_list(const char *const *items) {
    cordon_plugin_list_string_t list = {0};
    size_t count = 0;
    while (items != NULL && items[count] != NULL) count++;
    list.len = count;
    list.ptr = cordon_checked(calloc(count ? count : 1, sizeof *list.ptr));
    for (size_t i = 0; i < count; i++) list.ptr[i] = cordon_to_wit(items[i]);
    return list;
}
