/* The component's exports for tools: describe (the tools and the hook, from the plugin's macros)
 * and execute (run the named tool), with weak defaults for plugins without tools or a hook. */

#include "cordon_internal.h"

/* Plugins without tools or without a hook: these weak defaults stand in for the macros. */
__attribute__((weak)) const cordon_tool *cordon_plugin_tools(size_t *count) {
    *count = 0;
    return NULL;
}

__attribute__((weak)) const cordon_hook *cordon_plugin_hook(void) {
    return NULL;
}

static void set_hint(cordon_plugin_option_bool_t *hint, cordon_hint value) {
    hint->is_some = value != CORDON_UNSAID;
    hint->val = value == CORDON_YES;
}

/* The hook's comma-separated stage names as the contract's stages; a name that is no stage is
 * left out (and so never called), which `cordon test` shows as a stage missing from the list. */
static cordon_plugin_types_list_session_stage_t session_stages(const cordon_hook *hook) {
    cordon_plugin_types_list_session_stage_t stages = {0};
    if (hook->session == NULL || hook->stages == NULL) return stages;
    cordon_plugin_list_string_t names = cordon_names_to_wit(hook->stages);
    stages.ptr = cordon_checked(calloc(names.len + 1, sizeof *stages.ptr));
    for (size_t i = 0; i < names.len; i++) {
        for (cordon_plugin_types_session_stage_t stage = 0; stage < cordon_stage_count(); stage++) {
            const char *name = cordon_stage_name(stage);
            if (strlen(name) == names.ptr[i].len && memcmp(name, names.ptr[i].ptr, names.ptr[i].len) == 0) {
                stages.ptr[stages.len++] = stage;
            }
        }
    }
    cordon_plugin_list_string_free(&names);
    return stages;
}

void exports_cordon_plugin_plugin_describe(exports_cordon_plugin_plugin_plugin_info_t *ret) {
    size_t count = 0;
    const cordon_tool *tools = cordon_plugin_tools(&count);
    ret->tools.len = count;
    ret->tools.ptr = cordon_checked(calloc(count ? count : 1, sizeof *ret->tools.ptr));
    for (size_t i = 0; i < count; i++) {
        cordon_plugin_types_tool_spec_t *spec = &ret->tools.ptr[i];
        const char *title = tools[i].title ? tools[i].title : tools[i].label;
        spec->name = cordon_to_wit(tools[i].name);
        spec->title = cordon_to_wit(title ? title : tools[i].name);
        spec->description = cordon_to_wit(tools[i].description ? tools[i].description : "");
        spec->parameters = cordon_to_wit(tools[i].parameters ? tools[i].parameters
                                                      : "{\"type\":\"object\",\"properties\":{}}");
        spec->execution_mode = tools[i].sequential ? CORDON_PLUGIN_TYPES_EXECUTION_MODE_SEQUENTIAL
                                                   : CORDON_PLUGIN_TYPES_EXECUTION_MODE_PARALLEL;
        spec->output_schema.is_some = tools[i].output_schema != NULL;
        if (tools[i].output_schema) spec->output_schema.val = cordon_to_wit(tools[i].output_schema);
        set_hint(&spec->annotations.read_only, tools[i].read_only);
        set_hint(&spec->annotations.destructive, tools[i].destructive);
        set_hint(&spec->annotations.idempotent, tools[i].idempotent);
        set_hint(&spec->annotations.open_world, tools[i].open_world);
        spec->prompt_guidelines = cordon_to_wit_list(tools[i].guidelines);
        spec->locks = cordon_to_wit_list(tools[i].locks);
    }
    const cordon_hook *hook = cordon_plugin_hook();
    ret->hook.is_some = hook != NULL;
    if (hook == NULL) return;
    /* The comma-separated globs and stages become the hook-spec's lists. */
    ret->hook.val.tools = cordon_names_to_wit(hook->tools ? hook->tools : "");
    ret->hook.val.stages = session_stages(hook);
    ret->hook.val.before = hook->before != NULL;
    ret->hook.val.after = hook->after != NULL;
}

bool exports_cordon_plugin_plugin_execute(exports_cordon_plugin_plugin_tool_call_t *call,
                                          exports_cordon_plugin_plugin_tool_output_t *ret,
                                          exports_cordon_plugin_plugin_tool_failure_t *err) {
    char *id = cordon_from_wit(&call->id);
    char *name = cordon_from_wit(&call->name);
    char *arguments = cordon_from_wit(&call->arguments);
    exports_cordon_plugin_plugin_tool_call_free(call);
    cordon_call view = {.id = id, .name = name, .arguments = arguments};
    cordon_result result = {0};

    size_t count = 0;
    const cordon_tool *tools = cordon_plugin_tools(&count);
    const cordon_tool *tool = NULL;
    for (size_t i = 0; i < count && tool == NULL; i++) {
        if (strcmp(tools[i].name, name) == 0) tool = &tools[i];
    }
    if (tool == NULL) {
        cordon_fail(&result, "this plugin has no tool named \"%s\"", name);
    } else {
        tool->run(&view, &result);
    }
    free(id);
    free(name);
    free(arguments);

    if (result.failed) {
        err->kind = result.kind;
        err->message = cordon_to_wit(result.message);
        err->details = cordon_to_wit(result.details ? result.details : "");
        for (size_t i = 0; i < result.count; i++) cordon_plugin_types_content_free(&result.blocks[i]);
        free(result.blocks);
        free(result.message);
        free(result.details);
        free(result.structured);
        return false;
    }
    ret->content.ptr = result.blocks;
    ret->content.len = result.count;
    ret->details = cordon_to_wit(result.details ? result.details : "");
    ret->structured.is_some = result.structured != NULL;
    if (result.structured) ret->structured.val = cordon_to_wit(result.structured);
    free(result.details);
    free(result.structured);
    return true;
}
