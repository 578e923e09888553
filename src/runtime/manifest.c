/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Environment manifests from a sandbox's upper dirs (runtime/manifest.h).
 * A path of the sandbox lives in the layer whose target is its longest
 * prefix ("/" for the root, e.g. "/usr" for a sub-layer); its directory is
 * opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) from that
 * layer's upper dir, so nothing the sandbox planted leads elsewhere.
 */
#include "runtime/manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/util.h"

#define MAX_LAYERS  8
#define MAX_ENTRIES 4096 /* per directory listed */
#define MAX_DEPTH   3

typedef struct {
        char target[256]; /* "" for the root */
        int fd;           /* the layer's upper dir */
} layer_t;

typedef struct {
        layer_t layers[MAX_LAYERS];
        size_t n;
        json_t *pkgs;  /* "name" -> "version" */
        json_t *paths; /* sandbox path -> level */
        int overflow;  /* a bound was hit: level 3 */
} scan_t;

/* Mount points the runtime makes in every sandbox: not the sandbox's. */
static const char *const runtime_paths[] = {
    "/.sbx", "/workspace", "/deps", "/run",       "/tmp",
    "/proc", "/dev",       "/sys",  "/lost+found"};

static int open_beneath(int fd, const char *rel)
{
        struct open_how how = {
            .flags   = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                       RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        return (int)syscall(SYS_openat2, fd, *rel ? rel : ".", &how,
                            sizeof(how));
}

/* The directory of sandbox path @p path in its layer, or -1. */
static int open_path(const scan_t *sc, const char *path)
{
        const layer_t *best = NULL;
        size_t i, bl = 0;
        for (i = 0; i < sc->n; i++) {
                size_t tl = strlen(sc->layers[i].target);
                if (!strncmp(path, sc->layers[i].target, tl) &&
                    (path[tl] == '/' || path[tl] == '\0') &&
                    (!best || tl > bl)) {
                        best = &sc->layers[i];
                        bl   = tl;
                }
        }
        if (!best)
                return -1;
        path += bl;
        while (*path == '/')
                path++;
        return open_beneath(best->fd, path);
}

/* Calls @p fn for each entry of directory @p fd (closed here). */
static void list(scan_t *sc,
                 int fd,
                 void (*fn)(scan_t *, const struct dirent *, void *),
                 void *arg)
{
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *e;
        size_t n = 0;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (++n > MAX_ENTRIES) {
                        sc->overflow = 1;
                        break;
                }
                fn(sc, e, arg);
        }
        closedir(d);
}

static int name_ok(const char *s, size_t n)
{
        if (n == 0 || n > 128)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (!strchr(
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789._+!-",
                        s[i]))
                        return 0;
        return 1;
}

/* NAME-VERSION.dist-info: a package pip installed. */
static void dist_info(scan_t *sc, const struct dirent *e, void *arg)
{
        const char *s = e->d_name, *dash = strchr(s, '-');
        size_t n = strlen(s), sfx = strlen(".dist-info");
        char name[130], ver[130];

        (void)arg;
        if (e->d_type != DT_DIR || n <= sfx ||
            strcmp(s + n - sfx, ".dist-info") || !dash ||
            !name_ok(s, (size_t)(dash - s)) ||
            !name_ok(dash + 1, n - sfx - (size_t)(dash + 1 - s)))
                return;
        sbx_fmt(name, sizeof(name), "%.*s", (int)(dash - s), s);
        sbx_fmt(ver, sizeof(ver), "%.*s",
                (int)(n - sfx - (size_t)(dash + 1 - s)), dash + 1);
        for (char *p = name; *p; p++)
                *p = *p == '_' || *p == '.'
                         ? '-'
                         : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        if (json_object_size(sc->pkgs) >= SBX_MANIFEST_MAX_PACKAGES)
                sc->overflow = 1;
        else
                json_object_set_new(sc->pkgs, name, json_string(ver));
}

/* python3.N under a lib directory: its dist- and site-packages. */
static void python_dir(scan_t *sc, const struct dirent *e, void *lib)
{
        static const char *const sites[] = {"dist-packages", "site-packages"};
        char path[768];
        if (e->d_type != DT_DIR || strncmp(e->d_name, "python3", 7) ||
            !name_ok(e->d_name, strlen(e->d_name)))
                return;
        for (size_t i = 0; i < SBX_ARRAY_SIZE(sites); i++)
                list(sc,
                     open_path(sc,
                               sbx_fmt(path, sizeof(path), "%s/%s/%s",
                                       (const char *)lib, e->d_name, sites[i])),
                     dist_info, NULL);
}

static void python_lib(scan_t *sc, const char *lib)
{
        list(sc, open_path(sc, lib), python_dir, (void *)lib);
}

static void home_dir(scan_t *sc, const struct dirent *e, void *arg)
{
        char lib[512];
        (void)arg;
        if (e->d_type == DT_DIR && name_ok(e->d_name, strlen(e->d_name)))
                python_lib(sc, sbx_fmt(lib, sizeof(lib), "/home/%s/.local/lib",
                                       e->d_name));
}

/* How much a changed path pollutes the environment: caches and home
 * directories 1; what pip installs (packages, their scripts and C
 * headers) 2; anything else 3. A "loose" prefix also matches a longer
 * name (python3 covers python3.11). */
static int level_of(const char *p)
{
        static const struct {
                const char *prefix;
                int level, loose;
        } classes[] = {{"/root", 1, 0},
                       {"/home", 1, 0},
                       {"/var/cache", 1, 0},
                       {"/var/tmp", 1, 0},
                       {"/usr/local", 2, 0},
                       {"/usr/lib/python3", 2, 0},
                       {"/usr/include/python3", 2, 1}};
        for (size_t i = 0; i < SBX_ARRAY_SIZE(classes); i++) {
                size_t n = strlen(classes[i].prefix);
                if (!strncmp(p, classes[i].prefix, n) &&
                    (p[n] == '/' || p[n] == '\0' || classes[i].loose))
                        return classes[i].level;
        }
        return 3;
}

/* 1 if @p p is a strict ancestor of a classified prefix: look deeper. */
static int ancestor_of_class(const char *p)
{
        return !strcmp(p, "/usr") || !strcmp(p, "/usr/lib") ||
               !strcmp(p, "/usr/include") || !strcmp(p, "/var");
}

typedef struct {
        const char *parent;
        int depth;
} walk_t;

static void changed(scan_t *sc, const struct dirent *e, void *arg);

static void walk(scan_t *sc, const char *dir, int depth)
{
        walk_t w = {dir, depth};
        list(sc, open_path(sc, dir), changed, &w);
}

static void changed(scan_t *sc, const struct dirent *e, void *arg)
{
        const walk_t *w = arg;
        char p[768];
        size_t i;

        if (!name_ok(e->d_name, strlen(e->d_name))) {
                sc->overflow = 1; /* a name we will not print */
                return;
        }
        sbx_fmt(p, sizeof(p), "%s/%s", strcmp(w->parent, "/") ? w->parent : "",
                e->d_name);
        for (i = 0; i < SBX_ARRAY_SIZE(runtime_paths); i++)
                if (!strcmp(p, runtime_paths[i]))
                        return;
        for (i = 0; i < sc->n; i++)
                if (!strcmp(p, sc->layers[i].target))
                        return; /* a sub-layer: walked from its own upper */
        if (e->d_type == DT_DIR && ancestor_of_class(p) &&
            w->depth < MAX_DEPTH) {
                walk(sc, p, w->depth + 1);
                return;
        }
        if (json_object_size(sc->paths) >= SBX_MANIFEST_MAX_PATHS)
                sc->overflow = 1;
        else
                json_object_set_new(sc->paths, p, json_integer(level_of(p)));
}

static sbx_err_t add_layer(scan_t *sc,
                           const char *target,
                           const char *upper,
                           char *errstr,
                           size_t errstr_size)
{
        layer_t *l = &sc->layers[sc->n];
        if (sc->n == MAX_LAYERS)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "more than %d layers", MAX_LAYERS);
        l->fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (l->fd < 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  upper, strerror(errno));
        sbx_fmt(l->target, sizeof(l->target), "%s", target);
        sc->n++;
        return SBX_OK;
}

/* The root's upper dir, and each sub-layer's with the target that the
 * sandbox's config.json (written by the host) binds it at. */
static sbx_err_t layers(scan_t *sc,
                        const char *dir,
                        char *errstr,
                        size_t errstr_size)
{
        char path[1200], src[1200];
        json_error_t je;
        json_t *cfg, *m;
        size_t i, k;
        sbx_err_t err;

        err = add_layer(sc, "",
                        sbx_fmt(path, sizeof(path), "%s/disk/root.upper", dir),
                        errstr, errstr_size);
        if (err)
                return err;
        cfg = json_load_file(sbx_fmt(path, sizeof(path), "%s/config.json", dir),
                             0, &je);
        if (!cfg)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, je.text);
        for (k = 0; !err; k++) {
                const char *dst = NULL;
                sbx_fmt(src, sizeof(src), "%s/sub%zu", dir, k);
                json_array_foreach(json_object_get(cfg, "mounts"), i, m)
                {
                        const char *ms =
                            json_string_value(json_object_get(m, "source"));
                        if (ms && !strcmp(src, ms))
                                dst = json_string_value(
                                    json_object_get(m, "destination"));
                }
                if (!dst || dst[0] != '/')
                        break;
                err = add_layer(
                    sc, dst,
                    sbx_fmt(path, sizeof(path), "%s/disk/sub%zu.upper", dir, k),
                    errstr, errstr_size);
        }
        json_decref(cfg);
        return err;
}

/* FNV-1a 64 of "name==version\n" for every package, in name order. */
static json_t *lock_hash(const json_t *caps)
{
        uint64_t h = SBX_FNV1A64_INIT;
        char line[300], hex[17];
        size_t i;
        const json_t *c;

        json_array_foreach(caps, i, c)
        {
                sbx_fmt(line, sizeof(line), "%s==%s\n",
                        json_string_value(json_object_get(c, "name")),
                        json_string_value(json_object_get(c, "version")));
                h = sbx_fnv1a64(h, line);
        }
        sbx_fmt(hex, sizeof(hex), "%016llx", (unsigned long long)h);
        return json_string(json_array_size(caps) ? hex : "");
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of @p o in byte order, NULL-terminated (free the array). */
static const char **sorted_keys(const json_t *o)
{
        const char **keys = sbx_calloc(json_object_size(o) + 1, sizeof(*keys));
        const char *k;
        json_t *v;
        size_t n                                         = 0;
        json_object_foreach((json_t *)o, k, v) keys[n++] = k;
        qsort(keys, n, sizeof(*keys), cmp_str);
        return keys;
}

static json_t *result(scan_t *sc)
{
        json_t *caps = json_array(), *paths = json_array(), *v;
        int level = 0;

        size_t n          = json_object_size(sc->pkgs), i;
        const char **keys = sorted_keys(sc->pkgs);

        for (i = 0; i < n; i++)
                json_array_append_new(
                    caps,
                    json_pack("{s:s, s:O, s:s}", "name", keys[i], "version",
                              json_object_get(sc->pkgs, keys[i]), "ecosystem",
                              "pip"));
        free(keys);
        keys = sorted_keys(sc->paths);
        for (i = 0; keys[i]; i++) {
                v = json_object_get(sc->paths, keys[i]);
                json_array_append_new(paths, json_string(keys[i]));
                if (json_integer_value(v) > level)
                        level = (int)json_integer_value(v);
        }
        free(keys);
        if (n && level < 2)
                level = 2;
        if (sc->overflow)
                level = 3;
        return json_pack("{s:o, s:o, s:o, s:i}", "installed_capabilities", caps,
                         "pip_lock_hash", lock_hash(caps), "dirty_paths", paths,
                         "dirty_level", level);
}

sbx_err_t sbx_manifest_scan(const char *dir,
                            json_t **ret,
                            char *errstr,
                            size_t errstr_size)
{
        scan_t sc;
        sbx_err_t err;

        memset(&sc, 0, sizeof(sc));
        sc.pkgs  = json_object();
        sc.paths = json_object();
        err      = layers(&sc, dir, errstr, errstr_size);
        if (!err) {
                python_lib(&sc, "/usr/local/lib");
                python_lib(&sc, "/root/.local/lib");
                list(&sc, open_path(&sc, "/usr/lib/python3/dist-packages"),
                     dist_info, NULL);
                list(&sc, open_path(&sc, "/home"), home_dir, NULL);
                for (size_t i = 0; i < sc.n; i++)
                        walk(&sc,
                             sc.layers[i].target[0] ? sc.layers[i].target : "/",
                             1);
                *ret = result(&sc);
        }
        for (size_t i = 0; i < sc.n; i++)
                close(sc.layers[i].fd);
        json_decref(sc.pkgs);
        json_decref(sc.paths);
        return err;
}

/* Adds manifest @p m's packages and paths to @p sc, at its dirty level. */
static void merge_in(scan_t *sc, const json_t *m)
{
        const json_t *v;
        size_t i;
        json_int_t level =
            json_integer_value(json_object_get(m, "dirty_level"));
        json_array_foreach(json_object_get(m, "installed_capabilities"), i, v)
        {
                const char *name =
                    json_string_value(json_object_get(v, "name"));
                const json_t *ver = json_object_get(v, "version");
                if (name && json_is_string(ver))
                        json_object_set(sc->pkgs, name, (json_t *)ver);
        }
        json_array_foreach(json_object_get(m, "dirty_paths"), i, v)
        {
                const json_t *had =
                    json_object_get(sc->paths, json_string_value(v));
                if (json_is_string(v) &&
                    (!had || json_integer_value(had) < level))
                        json_object_set_new(sc->paths, json_string_value(v),
                                            json_integer(level));
        }
        if (level >= 3)
                sc->overflow = 1;
}

json_t *sbx_manifest_merge(const json_t *below, const json_t *above)
{
        scan_t sc;
        json_t *r;
        memset(&sc, 0, sizeof(sc));
        sc.pkgs  = json_object();
        sc.paths = json_object();
        merge_in(&sc, below);
        merge_in(&sc, above);
        r = result(&sc);
        json_decref(sc.pkgs);
        json_decref(sc.paths);
        return r;
}
