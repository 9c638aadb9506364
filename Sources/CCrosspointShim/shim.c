#define _GNU_SOURCE
#include "CCrosspointShim.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/props.h>
#include <spa/param/audio/format-utils.h>
#include <spa/pod/iter.h>

PW_LOG_TOPIC_STATIC(cpshim_topic, "mod.crosspoint");
#define PW_LOG_TOPIC_DEFAULT cpshim_topic

/* PipeWire 1.x sets a topic's level (PIPEWIRE_DEBUG=mod.crosspoint:3) when the topic is
 * registered with pw_log_topic_register, which 0.3.65 has not (its topic_init does it there):
 * looked up at run time, as the module is built against 0.3.65's headers. Registered once per
 * module instance and unregistered by each (a count: the library keeps a pointer to the topic,
 * which must not outlive this file's code). */
static void (*topic_register)(struct spa_log_topic *);
static void (*topic_unregister)(struct spa_log_topic *);

void cpshim_log_init(void)
{
    PW_LOG_TOPIC_INIT(cpshim_topic);
    if (topic_register == NULL || topic_unregister == NULL) {
        topic_register = (void (*)(struct spa_log_topic *))dlsym(RTLD_DEFAULT, "pw_log_topic_register");
        topic_unregister = (void (*)(struct spa_log_topic *))dlsym(RTLD_DEFAULT, "pw_log_topic_unregister");
    }
    if (topic_register != NULL && topic_unregister != NULL)
        topic_register(cpshim_topic);
}

void cpshim_log_deinit(void)
{
    if (topic_register != NULL && topic_unregister != NULL)
        topic_unregister(cpshim_topic);
}

void cpshim_log(enum spa_log_level level, const char *file, int line, const char *func, const char *message)
{
    if (pw_log_topic_enabled(level, cpshim_topic))
        pw_log_logt(level, cpshim_topic, file, line, func, "%s", message);
}

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

int cpshim_malloc_trim(void)
{
    return malloc_trim(0);
}

struct spa_pod *cpshim_dsp_format(struct spa_pod_builder *b, uint32_t rate, uint32_t channels)
{
    struct spa_audio_info_raw info = { .format = SPA_AUDIO_FORMAT_F32P, .flags = SPA_AUDIO_FLAG_UNPOSITIONED,
                                       .rate = rate, .channels = channels };
    return spa_format_audio_raw_build(b, SPA_PARAM_Format, &info);
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

struct spa_pod *cpshim_prop_info_strings(struct spa_pod_builder *b, const char *name, const char *description)
{
    return spa_pod_builder_add_object(b, SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo,
        SPA_PROP_INFO_name, SPA_POD_String(name),
        SPA_PROP_INFO_description, SPA_POD_String(description),
        SPA_PROP_INFO_type, SPA_POD_String(""),
        SPA_PROP_INFO_container, SPA_POD_Id(SPA_TYPE_Struct),
        SPA_PROP_INFO_params, SPA_POD_Bool(true));
}

const char *cpshim_type_name(uint32_t type)
{
    /* A pod's own type is one of the basic types: their short names, as
     * spa_debug_type_find_short_name(SPA_TYPE_ROOT, type) gives them. Not that function: it
     * would link libspa's whole tree of type tables, 16 kB of pointers the daemon relocates
     * and so keeps dirty for the module (BENCHMARKS.md, "Footprint"). */
    static const char *const names[] = {
        [SPA_TYPE_None] = "None", [SPA_TYPE_Bool] = "Bool", [SPA_TYPE_Id] = "Id",
        [SPA_TYPE_Int] = "Int", [SPA_TYPE_Long] = "Long", [SPA_TYPE_Float] = "Float",
        [SPA_TYPE_Double] = "Double", [SPA_TYPE_String] = "String", [SPA_TYPE_Bytes] = "Bytes",
        [SPA_TYPE_Rectangle] = "Rectangle", [SPA_TYPE_Fraction] = "Fraction",
        [SPA_TYPE_Bitmap] = "Bitmap", [SPA_TYPE_Array] = "Array", [SPA_TYPE_Struct] = "Struct",
        [SPA_TYPE_Object] = "Object", [SPA_TYPE_Sequence] = "Sequence",
        [SPA_TYPE_Pointer] = "Pointer", [SPA_TYPE_Fd] = "Fd", [SPA_TYPE_Choice] = "Choice",
        [SPA_TYPE_Pod] = "Pod",
    };
    if (type < SPA_N_ELEMENTS(names) && names[type] != NULL)
        return names[type];
    return "unknown";
}

int cpshim_registry_destroy(struct pw_registry *registry, uint32_t id)
{
    return pw_registry_destroy(registry, id);
}

int cpshim_metadata_set_property(struct pw_metadata *metadata, uint32_t subject, const char *key,
                                 const char *type, const char *value)
{
    return pw_metadata_set_property(metadata, subject, key, type, value);
}

void cpshim_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *hook,
                                  const struct pw_metadata_events *events, void *data)
{
    pw_metadata_add_listener(metadata, hook, events, data);
}
