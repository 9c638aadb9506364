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
// topic "mod.crosspoint", so PIPEWIRE_DEBUG=mod.crosspoint:4 works, with the Swift caller's
// file, line and function (the macros would put this file's).
void cpshim_log(enum spa_log_level level, const char *file, int line, const char *func, const char *message);
// pw_log_topic_enabled is a macro.
bool cpshim_log_enabled(enum spa_log_level level);
// PW_LOG_TOPIC_INIT is a macro; call once before logging.
void cpshim_log_init(void);
// Balances cpshim_log_init (PipeWire 1.x's topic registration), once per module instance.
void cpshim_log_deinit(void);

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

// glibc's malloc_trim(0) (malloc.h, which Swift's Glibc module leaves out): the free pages of
// every arena back to the system. For the main loop only (it takes each arena's lock).
int cpshim_malloc_trim(void);

// The node's Format (what pw-top's FORMAT column shows): 32-bit float planar (DSP), at
// `rate`, `channels` channels, unpositioned (spa_format_audio_raw_build is static inline).
struct spa_pod *cpshim_dsp_format(struct spa_pod_builder *b, uint32_t rate, uint32_t channels);

// PropInfo objects, built with the variadic spa_pod_builder_add_object.
struct spa_pod *cpshim_prop_info_float(struct spa_pod_builder *b, const char *name,
                                       const char *description, float def, float min, float max);
struct spa_pod *cpshim_prop_info_int(struct spa_pod_builder *b, const char *name,
                                     const char *description, int32_t def, int32_t min, int32_t max);
struct spa_pod *cpshim_prop_info_bool(struct spa_pod_builder *b, const char *name,
                                      const char *description, bool def);
struct spa_pod *cpshim_prop_info_int_array(struct spa_pod_builder *b, const char *name,
                                           const char *description, int32_t min, int32_t max);

// The short name of a pod type ("Int", "Struct"), as spa_debug_type_find_short_name gives it
// for the basic types, or "unknown".
const char *cpshim_type_name(uint32_t type);
// PropInfo of a list of channel names (a Struct of strings).
struct spa_pod *cpshim_prop_info_strings(struct spa_pod_builder *b, const char *name, const char *description);

// MIDI ports (midi.c). Each MIDI event of this cycle's buffer on `port` (a pw_filter port's
// data), as MIDI 1.0 bytes: SPA_CONTROL_Midi bodies as they are, UMP words (PipeWire 1.4)
// turned into MIDI 1.0. Returns the number of events. Real-time safe.
typedef void (*cpshim_midi_event_func)(void *data, const uint8_t *bytes, uint32_t size);
uint32_t cpshim_midi_read(void *port, cpshim_midi_event_func func, void *data);
// Writes this cycle's buffer on `port`: `count` messages (each status << 16 | data1 << 8 |
// data2) at the cycle's start, as MIDI 1.0 bytes or, with `ump`, as UMP words (what PipeWire
// 1.4's tools and ALSA bridge read); an empty sequence when count is 0. Returns how many fit,
// or -1 when the port has no buffer (it is not linked).
int32_t cpshim_midi_write(void *port, const uint32_t *messages, uint32_t count, bool ump);
// pw_loop_add_event and pw_loop_signal_event are macros (0.3) over the loop's utils. Signalling
// only writes an eventfd: the data thread may call it; signals before the callback runs coalesce.
struct spa_source *cpshim_loop_add_event(struct pw_loop *loop, spa_source_event_func_t func, void *data);
int cpshim_loop_signal_event(struct pw_loop *loop, struct spa_source *source);

// The client side (the crosspoint command): registry, node params, links.
#include "CCrosspointShimClient.h"

// pw_registry_destroy is a method macro: asks the daemon to destroy a global (a link the node
// made and no longer wants).
struct pw_registry;
int cpshim_registry_destroy(struct pw_registry *registry, uint32_t id);
// pw_metadata_set_property is a method macro: sets a key of a metadata object (the `default`
// metadata's configured default device; a stream's target).
struct pw_metadata;
int cpshim_metadata_set_property(struct pw_metadata *metadata, uint32_t subject, const char *key,
                                 const char *type, const char *value);
// pw_metadata_add_listener is a method macro: the default devices as the session manager sets them.
struct pw_metadata_events;
void cpshim_metadata_add_listener(struct pw_metadata *metadata, struct spa_hook *hook,
                                  const struct pw_metadata_events *events, void *data);
