/* The host's services: log, progress, cancellation and the plugin's settings. */

#include "cordon_internal.h"

void cordon_log(cordon_level level, const char *format, ...) {
    va_list args;
    va_start(args, format);
    char *text = cordon_vformat(format, args);
    va_end(args);
    wit_string message = cordon_to_wit(text);
    free(text);
    cordon_plugin_host_log((cordon_plugin_host_level_t)level, &message);
    cordon_plugin_string_free(&message);
}

void cordon_progress(const char *text) {
    cordon_plugin_types_content_t block;
    block.tag = CORDON_PLUGIN_TYPES_CONTENT_TEXT;
    block.val.text = cordon_to_wit(text);
    cordon_plugin_host_tool_output_t update;
    update.content.ptr = &block;
    update.content.len = 1;
    update.details = cordon_to_wit("");
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
    char *out = settings.len ? cordon_from_wit(&settings) : cordon_copy_text("{}");
    cordon_plugin_host_json_free(&settings);
    return out;
}
