#include "CCrosspointShimClient.h"

#include <spa/param/props.h>

void cpshim_loop_enter(struct pw_loop *loop) { pw_loop_enter(loop); }

void cpshim_loop_leave(struct pw_loop *loop) { pw_loop_leave(loop); }

int cpshim_loop_iterate(struct pw_loop *loop, int timeout_ms) { return pw_loop_iterate(loop, timeout_ms); }

int cpshim_core_sync(struct pw_core *core, uint32_t id, int seq) { return pw_core_sync(core, id, seq); }

void cpshim_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                  const struct pw_registry_events *events, void *data)
{
    pw_registry_add_listener(registry, hook, events, data);
}

void cpshim_node_add_listener(struct pw_node *node, struct spa_hook *hook,
                              const struct pw_node_events *events, void *data)
{
    pw_node_add_listener(node, hook, events, data);
}

int cpshim_node_enum_params(struct pw_node *node, int seq, uint32_t id, uint32_t start, uint32_t num,
                            const struct spa_pod *filter)
{
    return pw_node_enum_params(node, seq, id, start, num, filter);
}

int cpshim_node_set_param(struct pw_node *node, uint32_t id, uint32_t flags, const struct spa_pod *param)
{
    return pw_node_set_param(node, id, flags, param);
}
