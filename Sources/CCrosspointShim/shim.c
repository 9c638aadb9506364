#include "CCrosspointShim.h"

#include <errno.h>
#include <string.h>
#include <spa/param/props.h>
#include <spa/pod/iter.h>
#include <spa/debug/types.h>

PW_LOG_TOPIC_STATIC(cpshim_topic, "mod.crosspoint");
#define PW_LOG_TOPIC_DEFAULT cpshim_topic

void cpshim_log_init(void) { PW_LOG_TOPIC_INIT(cpshim_topic); }

void cpshim_log(enum spa_log_level level, const char *message) { pw_log(level, "%s", message); }

bool cpshim_log_enabled(enum spa_log_level level) { return pw_log_topic_enabled(level, cpshim_topic); }

struct pw_properties *cpshim_properties_new(void) { return pw_properties_new(NULL, NULL); }

void cpshim_core_add_listener(struct pw_core *core, struct spa_hook *hook,
                              const struct pw_core_events *events, void *data)
{
    pw_core_add_listener(core, hook, events, data);
}

int cpshim_loop_invoke(struct pw_loop *loop, spa_invoke_func_t func, uint32_t seq,
                       const void *data, size_t size, bool block, void *user_data)
{
    return pw_loop_invoke(loop, func, seq, data, size, block, user_data);
}

struct spa_source *cpshim_loop_add_timer(struct pw_loop *loop, spa_source_timer_func_t func, void *data)
{
    return pw_loop_add_timer(loop, func, data);
}

int cpshim_loop_arm_timer(struct pw_loop *loop, struct spa_source *timer, uint64_t delay_ms)
{
    struct timespec value = { (time_t)(delay_ms / 1000), (long)((delay_ms % 1000) * SPA_NSEC_PER_MSEC) };
    return pw_loop_update_timer(loop, timer, &value, NULL, false);
}

void cpshim_loop_destroy_source(struct pw_loop *loop, struct spa_source *source)
{
    pw_loop_destroy_source(loop, source);
}

struct spa_pod *cpshim_prop_info_float(struct spa_pod_builder *b, const char *name,
                                       const char *description, float def, float min, float max)
{
    return spa_pod_builder_add_object(b, SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo,
        SPA_PROP_INFO_name, SPA_POD_String(name),
        SPA_PROP_INFO_description, SPA_POD_String(description),
        SPA_PROP_INFO_type, SPA_POD_CHOICE_RANGE_Float(def, min, max),
        SPA_PROP_INFO_params, SPA_POD_Bool(true));
}

struct spa_pod *cpshim_prop_info_int(struct spa_pod_builder *b, const char *name,
                                     const char *description, int32_t def, int32_t min, int32_t max)
{
    return spa_pod_builder_add_object(b, SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo,
        SPA_PROP_INFO_name, SPA_POD_String(name),
        SPA_PROP_INFO_description, SPA_POD_String(description),
        SPA_PROP_INFO_type, SPA_POD_CHOICE_RANGE_Int(def, min, max),
        SPA_PROP_INFO_params, SPA_POD_Bool(true));
}

struct spa_pod *cpshim_prop_info_bool(struct spa_pod_builder *b, const char *name,
                                      const char *description, bool def)
{
    return spa_pod_builder_add_object(b, SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo,
        SPA_PROP_INFO_name, SPA_POD_String(name),
        SPA_PROP_INFO_description, SPA_POD_String(description),
        SPA_PROP_INFO_type, SPA_POD_CHOICE_Bool(def),
        SPA_PROP_INFO_params, SPA_POD_Bool(true));
}

struct spa_pod *cpshim_prop_info_int_array(struct spa_pod_builder *b, const char *name,
                                           const char *description, int32_t min, int32_t max)
{
    return spa_pod_builder_add_object(b, SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo,
        SPA_PROP_INFO_name, SPA_POD_String(name),
        SPA_PROP_INFO_description, SPA_POD_String(description),
        SPA_PROP_INFO_type, SPA_POD_CHOICE_RANGE_Int(min, min, max),
        SPA_PROP_INFO_container, SPA_POD_Id(SPA_TYPE_Array),
        SPA_PROP_INFO_params, SPA_POD_Bool(true));
}

void cpshim_props_begin(struct spa_pod_builder *b, struct cpshim_props_frames *f)
{
    spa_pod_builder_push_object(b, &f->object, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
    spa_pod_builder_prop(b, SPA_PROP_params, 0);
    spa_pod_builder_push_struct(b, &f->params);
}

void cpshim_props_add_float(struct spa_pod_builder *b, const char *key, float value)
{
    spa_pod_builder_string(b, key);
    spa_pod_builder_float(b, value);
}

void cpshim_props_add_int(struct spa_pod_builder *b, const char *key, int32_t value)
{
    spa_pod_builder_string(b, key);
    spa_pod_builder_int(b, value);
}

void cpshim_props_add_bool(struct spa_pod_builder *b, const char *key, bool value)
{
    spa_pod_builder_string(b, key);
    spa_pod_builder_bool(b, value);
}

void cpshim_props_add_strings(struct spa_pod_builder *b, const char *key, const char *const *values, uint32_t count)
{
    struct spa_pod_frame f;
    spa_pod_builder_string(b, key);
    spa_pod_builder_push_struct(b, &f);
    for (uint32_t i = 0; i < count; i++) spa_pod_builder_string(b, values[i]);
    spa_pod_builder_pop(b, &f);
}

struct spa_pod *cpshim_prop_info_strings(struct spa_pod_builder *b, const char *name, const char *description)
{
    return spa_pod_builder_add_object(b, SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo,
        SPA_PROP_INFO_name, SPA_POD_String(name),
        SPA_PROP_INFO_description, SPA_POD_String(description),
        SPA_PROP_INFO_type, SPA_POD_String(""),
        SPA_PROP_INFO_container, SPA_POD_Id(SPA_TYPE_Struct),
        SPA_PROP_INFO_params, SPA_POD_Bool(true));
}

void cpshim_props_add_int_array(struct spa_pod_builder *b, const char *key, const int32_t *values, uint32_t count)
{
    spa_pod_builder_string(b, key);
    spa_pod_builder_array(b, sizeof(int32_t), SPA_TYPE_Int, count, values);
}

struct spa_pod *cpshim_props_end(struct spa_pod_builder *b, struct cpshim_props_frames *f,
                                 float volume, bool mute, const float *channel_volumes, uint32_t count)
{
    spa_pod_builder_pop(b, &f->params);
    spa_pod_builder_prop(b, SPA_PROP_volume, 0);
    spa_pod_builder_float(b, volume);
    spa_pod_builder_prop(b, SPA_PROP_mute, 0);
    spa_pod_builder_bool(b, mute);
    spa_pod_builder_prop(b, SPA_PROP_channelVolumes, 0);
    spa_pod_builder_array(b, sizeof(float), SPA_TYPE_Float, count, channel_volumes);
    return spa_pod_builder_pop(b, &f->object);
}

static bool number_of(const struct spa_pod *pod, double *out)
{
    switch (SPA_POD_TYPE(pod)) {
    case SPA_TYPE_Int: *out = SPA_POD_VALUE(struct spa_pod_int, pod); return true;
    case SPA_TYPE_Long: *out = (double)SPA_POD_VALUE(struct spa_pod_long, pod); return true;
    case SPA_TYPE_Float: *out = SPA_POD_VALUE(struct spa_pod_float, pod); return true;
    case SPA_TYPE_Double: *out = SPA_POD_VALUE(struct spa_pod_double, pod); return true;
    default: return false;
    }
}

static const char *type_name(uint32_t type)
{
    const char *name = spa_debug_type_find_short_name(SPA_TYPE_ROOT, type);
    return name ? name : "unknown";
}

static void describe(const struct spa_pod *pod, struct cpshim_value *v)
{
    memset(v, 0, offsetof(struct cpshim_value, numbers));
    if (number_of(pod, &v->number)) {
        v->kind = CPSHIM_NUMBER;
    } else if (spa_pod_is_bool(pod)) {
        v->kind = CPSHIM_BOOL;
        spa_pod_get_bool(pod, &v->flag);
    } else if (spa_pod_is_string(pod)) {
        v->kind = CPSHIM_STRING;
        spa_pod_get_string(pod, &v->string);
    } else if (spa_pod_is_array(pod)) {
        const struct spa_pod_array *arr = (const struct spa_pod_array *)pod;
        const struct spa_pod *child = &arr->body.child;
        v->kind = CPSHIM_NUMBERS;
        void *item;
        SPA_POD_ARRAY_FOREACH(arr, item) {
            double x;
            struct { struct spa_pod pod; uint8_t body[8]; } tmp = { *child, { 0 } };
            memcpy(tmp.body, item, SPA_MIN(child->size, sizeof(tmp.body)));
            if (!number_of(&tmp.pod, &x)) { v->kind = CPSHIM_OTHER; v->type_name = "array of non-numbers"; return; }
            if (v->count < CPSHIM_MAX_NUMBERS) v->numbers[v->count] = x;
            v->count++;
        }
    } else if (spa_pod_is_struct(pod)) {
        const struct spa_pod *item;
        bool numbers = true, strings = true;
        SPA_POD_STRUCT_FOREACH(pod, item) {
            double x;
            if (number_of(item, &x)) {
                strings = false;
                if (v->count < CPSHIM_MAX_NUMBERS) v->numbers[v->count] = x;
            } else if (spa_pod_is_string(item)) {
                numbers = false;
                if (v->count < CPSHIM_MAX_NUMBERS) spa_pod_get_string(item, &v->strings[v->count]);
            } else {
                numbers = strings = false;
            }
            v->count++;
        }
        if (v->count == 0 || numbers) v->kind = CPSHIM_NUMBERS;
        else if (strings) v->kind = CPSHIM_STRINGS;
        else { v->kind = CPSHIM_OTHER; v->type_name = "list mixing numbers, strings or other values"; }
    } else {
        v->kind = CPSHIM_OTHER;
        v->type_name = type_name(SPA_POD_TYPE(pod));
    }
}

int cpshim_props_parse(const struct spa_pod *param, cpshim_prop_fn fn, void *user)
{
    static __thread struct cpshim_value value;  // large; not on the (main-loop) stack
    const struct spa_pod_prop *prop;

    if (param == NULL || !spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Props))
        return -EINVAL;

    SPA_POD_OBJECT_FOREACH((const struct spa_pod_object *)param, prop) {
        switch (prop->key) {
        case SPA_PROP_params: {
            const struct spa_pod *item, *key = NULL;
            if (!spa_pod_is_struct(&prop->value)) {
                value.kind = CPSHIM_OTHER;
                value.type_name = type_name(SPA_POD_TYPE(&prop->value));
                fn(user, NULL, &value);
                break;
            }
            SPA_POD_STRUCT_FOREACH(&prop->value, item) {
                if (key == NULL) { key = item; continue; }
                const char *name = NULL;
                if (spa_pod_is_string(key)) spa_pod_get_string(key, &name);
                describe(item, &value);
                fn(user, name, &value);
                key = NULL;
            }
            if (key != NULL) {  // a key with no value
                const char *name = NULL;
                if (spa_pod_is_string(key)) spa_pod_get_string(key, &name);
                memset(&value, 0, offsetof(struct cpshim_value, numbers));
                value.kind = CPSHIM_OTHER;
                value.type_name = "nothing (the key has no value)";
                fn(user, name, &value);
            }
            break;
        }
        case SPA_PROP_volume:
            describe(&prop->value, &value);
            fn(user, "volume", &value);
            break;
        case SPA_PROP_mute:
            describe(&prop->value, &value);
            fn(user, "mute", &value);
            break;
        case SPA_PROP_channelVolumes:
            describe(&prop->value, &value);
            fn(user, "channelVolumes", &value);
            break;
        default:
            break;
        }
    }
    return 0;
}
