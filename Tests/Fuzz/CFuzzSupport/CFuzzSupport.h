// For the fuzz targets' seed corpus only (never linked into the module): a Props pod made
// from text the way pw-cli 0.3.65 makes the pod of `pw-cli set-param <id> Props '<text>'`
// (src/tools/pw-cli.c, do_set_param: spa_json_to_pod with the type info of the param id).
#pragma once
#include <errno.h>
#include <string.h>
#include <spa/utils/json-pod.h>
#include <spa/param/type-info.h>

// Writes the pod into `buffer`; returns its size in bytes, or a negative errno.
static inline int fuzz_props_pod_from_json(const char *text, void *buffer, uint32_t size)
{
    struct spa_pod_builder b;
    const struct spa_type_info *ti = spa_debug_type_find_short(spa_type_param, "Props");
    if (ti == NULL)
        return -ENOENT;
    spa_pod_builder_init(&b, buffer, size);
    int res = spa_json_to_pod(&b, 0, ti, text, strlen(text));
    if (res < 0)
        return res;
    if (b.state.offset > size)
        return -ENOSPC;
    struct spa_pod *pod = (struct spa_pod *)buffer;
    return (int)SPA_POD_SIZE(pod);
}
