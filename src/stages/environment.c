/* SPDX-License-Identifier: Apache-2.0 */
#include "stages/environment.h"

#include <stdint.h>
#include <string.h>

#include "core/util.h"

/* @p s and a newline, into FNV-1a hash @p h. */
static uint64_t fnv(uint64_t h, const char *s)
{
        return sbx_fnv1a64(sbx_fnv1a64(h, s), "\n");
}

json_t *sbx_env_manifest(const sbx_state_t *s,
                         const json_t *scan,
                         const char *python)
{
        const json_t *caps  = json_object_get(scan, "installed_capabilities");
        const json_t *paths = json_object_get(scan, "dirty_paths"), *v;
        const char *digest  = s->template_digest ? s->template_digest : "";
        const char *lock =
            json_string_value(json_object_get(scan, "pip_lock_hash"));
        int level =
            (int)json_integer_value(json_object_get(scan, "dirty_level"));
        uint64_t h = SBX_FNV1A64_INIT;
        char fp[24], lv[8];
        size_t i;

        h = fnv(h, digest);
        h = fnv(h, lock);
        h = fnv(h, sbx_fmt(lv, sizeof(lv), "%d", level));
        json_array_foreach(paths, i, v) h = fnv(h, json_string_value(v));
        sbx_fmt(fp, sizeof(fp), "env-%016llx", (unsigned long long)h);
        return json_pack(
            "{s:s, s:o, s:s, s:n, s:n, s:o, s:n, s:o, s:i, s:s}",
            "template_digest", digest, "runtimes",
            python && *python ? json_pack("{s:s}", "python", python)
                              : json_object(),
            "pip_lock_hash", lock ? lock : "", "npm_lock_hash",
            "apt_state_hash", "installed_capabilities",
            caps ? json_incref((json_t *)caps) : json_array(), "workspace_id",
            "dirty_paths", paths ? json_incref((json_t *)paths) : json_array(),
            "dirty_level", level, "fingerprint", fp);
}
