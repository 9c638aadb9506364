// Wrappers for the client side of libpipewire (the `crosspoint` command): the method macros
// of the core, registry, node and loop interfaces, which Swift cannot call. Everything
// else (pw_context_connect, pw_core_create_object, pw_registry_bind, pw_proxy_*) Swift
// calls directly through CPipeWire.
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <pipewire/pipewire.h>
#include <spa/pod/builder.h>
#include "CCrosspointShim.h"

// pw_loop_enter is a macro over the loop's control interface.
void cpshim_loop_enter(struct pw_loop *loop);
// pw_loop_leave is a macro over the loop's control interface.
void cpshim_loop_leave(struct pw_loop *loop);
// pw_loop_iterate is a macro over the loop's control interface; waits up to timeout_ms.
int cpshim_loop_iterate(struct pw_loop *loop, int timeout_ms);

// pw_core_sync is a method macro; returns the seq its `done` event will carry.
int cpshim_core_sync(struct pw_core *core, uint32_t id, int seq);

// pw_registry_add_listener is a method macro.
void cpshim_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                  const struct pw_registry_events *events, void *data);

// pw_node_add_listener is a method macro.
void cpshim_node_add_listener(struct pw_node *node, struct spa_hook *hook,
                              const struct pw_node_events *events, void *data);
// pw_node_enum_params is a method macro.
int cpshim_node_enum_params(struct pw_node *node, int seq, uint32_t id, uint32_t start, uint32_t num,
                            const struct spa_pod *filter);
// pw_node_set_param is a method macro.
int cpshim_node_set_param(struct pw_node *node, uint32_t id, uint32_t flags, const struct spa_pod *param);
