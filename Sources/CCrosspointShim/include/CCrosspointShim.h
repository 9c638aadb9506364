// Wrappers for the libpipewire and libspa macros, variadic functions and pod walks that
// Swift cannot call. Each exists for the reason in its comment; everything else Swift calls
// directly through CPipeWire.
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <pipewire/pipewire.h>
#include <pipewire/filter.h>
#include <spa/pod/builder.h>

// pw_log_* are macros over a variadic function; this logs one preformatted line under the
// topic "mod.crosspoint", so PIPEWIRE_DEBUG=mod.crosspoint:4 works.
void cpshim_log(enum spa_log_level level, const char *message);
// pw_log_topic_enabled is a macro.
bool cpshim_log_enabled(enum spa_log_level level);
// PW_LOG_TOPIC_INIT is a macro; call once before logging.
void cpshim_log_init(void);

// pw_properties_new is variadic.
struct pw_properties *cpshim_properties_new(void);

// pw_core_add_listener and pw_proxy_add_listener go through method macros.
void cpshim_core_add_listener(struct pw_core *core, struct spa_hook *hook,
                              const struct pw_core_events *events, void *data);
// pw_loop_invoke is a macro over the loop's method table.
int cpshim_loop_invoke(struct pw_loop *loop, spa_invoke_func_t func, uint32_t seq,
                       const void *data, size_t size, bool block, void *user_data);

// pw_loop_add_timer, pw_loop_update_timer and pw_loop_destroy_source are macros over the
// loop's utils; the timer fires once, `delay_ms` from now (0 disarms it).
struct spa_source *cpshim_loop_add_timer(struct pw_loop *loop, spa_source_timer_func_t func, void *data);
int cpshim_loop_arm_timer(struct pw_loop *loop, struct spa_source *timer, uint64_t delay_ms);
void cpshim_loop_destroy_source(struct pw_loop *loop, struct spa_source *source);

// PropInfo objects, built with the variadic spa_pod_builder_add_object.
struct spa_pod *cpshim_prop_info_float(struct spa_pod_builder *b, const char *name,
                                       const char *description, float def, float min, float max);
struct spa_pod *cpshim_prop_info_int(struct spa_pod_builder *b, const char *name,
                                     const char *description, int32_t def, int32_t min, int32_t max);
struct spa_pod *cpshim_prop_info_bool(struct spa_pod_builder *b, const char *name,
                                      const char *description, bool def);
struct spa_pod *cpshim_prop_info_int_array(struct spa_pod_builder *b, const char *name,
                                           const char *description, int32_t min, int32_t max);

// A Props object: SPA_PROP_params = Struct(key, value, ...) plus the standard volume, mute
// and channelVolumes. Frames are the caller's: begin, add, end.
struct cpshim_props_frames { struct spa_pod_frame object, params; };
void cpshim_props_begin(struct spa_pod_builder *b, struct cpshim_props_frames *f);
void cpshim_props_add_float(struct spa_pod_builder *b, const char *key, float value);
void cpshim_props_add_int(struct spa_pod_builder *b, const char *key, int32_t value);
void cpshim_props_add_bool(struct spa_pod_builder *b, const char *key, bool value);
void cpshim_props_add_strings(struct spa_pod_builder *b, const char *key, const char *const *values, uint32_t count);
struct spa_pod *cpshim_prop_info_strings(struct spa_pod_builder *b, const char *name, const char *description);
void cpshim_props_add_int_array(struct spa_pod_builder *b, const char *key, const int32_t *values, uint32_t count);
struct spa_pod *cpshim_props_end(struct spa_pod_builder *b, struct cpshim_props_frames *f,
                                 float volume, bool mute, const float *channel_volumes, uint32_t count);

// One value of a Props object, as the walk below reports it.
enum cpshim_value_kind {
    CPSHIM_NUMBER = 1,   // Int, Long, Float or Double in `number`
    CPSHIM_BOOL = 2,     // `flag`
    CPSHIM_NUMBERS = 3,  // an Array or Struct of numbers: `numbers[0..<count]`
    CPSHIM_STRING = 4,   // `string`
    CPSHIM_OTHER = 5,    // anything else; `type_name` says what it was
    CPSHIM_STRINGS = 6,  // a Struct of strings: `strings[0..<count]` (valid during the callback)
};
#define CPSHIM_MAX_NUMBERS 1024
struct cpshim_value {
    enum cpshim_value_kind kind;
    double number;
    bool flag;
    const char *string;
    const char *type_name;
    uint32_t count;       // numbers in `numbers`; for arrays longer than the buffer, their real length
    double numbers[CPSHIM_MAX_NUMBERS];
    const char *strings[CPSHIM_MAX_NUMBERS];
};
// Called once per key found; key is NULL when a params entry's key is not a string.
typedef void (*cpshim_prop_fn)(void *user, const char *key, const struct cpshim_value *value);
// Walks a Props object (spa_pod_object_foreach and SPA_POD_STRUCT_FOREACH are macros):
// each SPA_PROP_params pair, then volume, mute and channelVolumes. Returns -EINVAL if the
// pod is not a Props object.
int cpshim_props_parse(const struct spa_pod *param, cpshim_prop_fn fn, void *user);

// The client side (the crosspoint command): registry, node params, links.
#include "CCrosspointShimClient.h"
