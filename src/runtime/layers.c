/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The layer store (runtime/layers.h): opening it, snapshot records,
 * fork templates and collection (taking a snapshot is snapshot.c).
 * Records are written to staging/ and renamed into snapshots/, after an
 * fsync. Collection holds the store's lock throughout, so it never sees a
 * half-committed snapshot; it moves what it deletes into trash/ first and
 * empties trash/ last. Staging entries are named <pid>.<n>, so reopening
 * a store clears only those of dead processes.
 */
#include "runtime/layers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/layers_int.h"
#include "runtime/sha256.h"

#define MAX_RECORD (1 << 20)

static int hex_ok(const char *s, size_t n)
{
        return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

int sbx_layers_id_ok(const char *id)
{
        return id && !strncmp(id, "snap-", 5) && hex_ok(id + 5, 12);
}

int sbx_layers_digest_ok(const char *d)
{
        return d && !strncmp(d, "sha256:", 7) && hex_ok(d + 7, 64);
}

int sbx_layers_target_ok(const char *t)
{
        return t && strlen(t) < SBX_LAYERS_TARGET_SIZE &&
               (!strcmp(t, "/") || sbx_fs_abs_path_ok(t));
}

char *sbx_layers_layer_dir(const sbx_layers_t *s,
                           const char *digest,
                           char *buf,
                           size_t size)
{
        return sbx_fmt(buf, size, "%s/layers/sha256-%s", s->dir, digest + 7);
}

char *sbx_layers_snap_path(const sbx_layers_t *s,
                           const char *id,
                           char *buf,
                           size_t size)
{
        return sbx_fmt(buf, size, "%s/snapshots/%s.json", s->dir, id);
}

/* A fresh name in staging/ or trash/ (@p area). */
char *sbx_layers_work_path(sbx_layers_t *s,
                           const char *area,
                           char *buf,
                           size_t size)
{
        return sbx_fmt(buf, size, "%s/%s/%ld.%u", s->dir, area, (long)getpid(),
                       atomic_fetch_add(&s->seq, 1));
}

int sbx_layers_lock(const sbx_layers_t *s, char *errstr, size_t errstr_size)
{
        char path[1024];
        int fd = open(sbx_fmt(path, sizeof(path), "%s/lock", s->dir),
                      O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s", path,
                           strerror(errno));
                return -1;
        }
        while (flock(fd, LOCK_EX))
                if (errno != EINTR) {
                        sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                   "lock %s: %s", path, strerror(errno));
                        close(fd);
                        return -1;
                }
        return fd;
}

/* Removes the entries of @p area; in staging/ only those of dead
 * processes. Called with the lock held. */
static sbx_err_t clear_area(const sbx_layers_t *s,
                            const char *area,
                            int only_dead,
                            char *errstr,
                            size_t errstr_size)
{
        char dir[1024], p[1200];
        struct dirent **names = NULL;
        sbx_err_t err         = SBX_OK;
        int n = scandir(sbx_fmt(dir, sizeof(dir), "%s/%s", s->dir, area),
                        &names, NULL, alphasort);

        if (n < 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  dir, strerror(errno));
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                long pid         = strtol(name, NULL, 10);
                if (strcmp(name, ".") && strcmp(name, "..") &&
                    (!only_dead ||
                     (pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH)) &&
                    !err)
                        err = sbx_fs_rmtree(
                            sbx_fmt(p, sizeof(p), "%s/%s", dir, name), errstr,
                            errstr_size);
                free(names[i]);
        }
        free(names);
        return err;
}

sbx_layers_t *sbx_layers_open(const char *dir, char *errstr, size_t errstr_size)
{
        static const char *const areas[] = {"layers", "snapshots", "staging",
                                            "trash"};
        sbx_layers_t *s                  = sbx_calloc(1, sizeof(*s));
        char p[1024];
        int fd;

        s->lim = (sbx_layer_limits_t){1000000, 16ull << 30};
        if (!sbx_fs_abs_path_ok(dir) || strlen(dir) > 512) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "layer store '%s': need an absolute path of "
                           "[A-Za-z0-9/_.+-], at most 512 bytes",
                           dir ? dir : "");
                goto fail;
        }
        s->dir = sbx_strdup(dir);
        if (sbx_fs_mkdirs(dir, 0700, 0, 0, errstr, errstr_size))
                goto fail;
        for (size_t i = 0; i < SBX_ARRAY_SIZE(areas); i++)
                if (sbx_fs_mkdir(sbx_fmt(p, sizeof(p), "%s/%s", dir, areas[i]),
                                 0700, 0, 0, errstr, errstr_size))
                        goto fail;
        if ((fd = sbx_layers_lock(s, errstr, errstr_size)) < 0)
                goto fail;
        if (clear_area(s, "staging", 1, errstr, errstr_size) ||
            clear_area(s, "trash", 0, errstr, errstr_size)) {
                close(fd);
                goto fail;
        }
        close(fd);
        return s;
fail:
        sbx_layers_close(s);
        return NULL;
}

void sbx_layers_close(sbx_layers_t *s)
{
        if (!s)
                return;
        free(s->dir);
        free(s);
}

void sbx_layers_set_limits(sbx_layers_t *s,
                           uint64_t max_entries,
                           uint64_t max_bytes)
{
        if (max_entries)
                s->lim.max_entries = max_entries;
        if (max_bytes)
                s->lim.max_bytes = max_bytes;
}

sbx_err_t sbx_layers_load_json(const char *path,
                               json_t **ret,
                               char *errstr,
                               size_t errstr_size)
{
        char *text = NULL;
        json_error_t je;
        struct stat st;
        sbx_err_t err;

        if (lstat(path, &st) && errno == ENOENT)
                return SBX_ERR_NOENT;
        err = sbx_read_file(path, MAX_RECORD, &text, NULL, errstr, errstr_size);
        if (err)
                return err;
        *ret = json_loads(text, 0, &je);
        free(text);
        if (!*ret)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, je.text);
        return SBX_OK;
}

static sbx_err_t parse_layers(sbx_snap_t *r, json_t *layers)
{
        size_t i;
        json_t *l;
        if (!json_is_array(layers) || !json_array_size(layers) ||
            json_array_size(layers) > SBX_LAYERS_MAX_STACKS)
                return SBX_ERR_INVALID;
        json_array_foreach(layers, i, l)
        {
                const char *t = NULL, *d = NULL;
                json_int_t size = 0, entries = 0;
                if (json_unpack(l, "{s:s, s:s, s:I, s:I}", "target", &t,
                                "digest", &d, "size_bytes", &size, "entries",
                                &entries) ||
                    !sbx_layers_target_ok(t) || !sbx_layers_digest_ok(d) ||
                    size < 0 || entries < 0)
                        return SBX_ERR_INVALID;
                sbx_fmt(r->layers[i].target, SBX_LAYERS_TARGET_SIZE, "%s", t);
                sbx_fmt(r->layers[i].digest, SBX_LAYER_DIGEST_SIZE, "%s", d);
                r->layers[i].size    = (uint64_t)size;
                r->layers[i].entries = (uint64_t)entries;
        }
        r->n = i;
        return SBX_OK;
}

/* Reads record @p id; SBX_ERR_NOENT if there is none. */
sbx_err_t sbx_layers_snap_load(const sbx_layers_t *s,
                               const char *id,
                               sbx_snap_t *r,
                               char *errstr,
                               size_t errstr_size)
{
        const char *rid = NULL, *parent, *base = NULL, *dg = NULL;
        json_t *jparent = NULL;
        char path[1024];
        json_t *j = NULL, *layers = NULL;
        sbx_err_t err = sbx_layers_load_json(
            sbx_layers_snap_path(s, id, path, sizeof(path)), &j, errstr,
            errstr_size);
        if (err == SBX_ERR_NOENT)
                return sbx_seterr(errstr, errstr_size, err,
                                  "no snapshot %s in %s", id, s->dir);
        if (err)
                return err;
        memset(r, 0, sizeof(*r));
        if (json_unpack(j, "{s:s, s:o, s:s, s:s, s:o}", "id", &rid, "parent",
                        &jparent, "base", &base, "digest", &dg, "layers",
                        &layers) ||
            strcmp(rid, id) ||
            ((parent = json_string_value(jparent)) ? !sbx_layers_id_ok(parent)
                                                   : !json_is_null(jparent)) ||
            !sbx_layers_digest_ok(base) || !sbx_layers_digest_ok(dg) ||
            parse_layers(r, layers))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "%s: not a snapshot record", path);
        else {
                sbx_fmt(r->id, sizeof(r->id), "%s", rid);
                sbx_fmt(r->parent, sizeof(r->parent), "%s",
                        parent ? parent : "");
                sbx_fmt(r->base, sizeof(r->base), "%s", base);
                sbx_fmt(r->digest, sizeof(r->digest), "%s", dg);
        }
        json_decref(j);
        return err;
}

/* Writes @p text to @p path durably and atomically (via @p tmp). */
static sbx_err_t write_durably(const char *tmp,
                               const char *path,
                               const char *text,
                               char *errstr,
                               size_t errstr_size)
{
        char dir[1024], *slash;
        int fd, dfd;
        sbx_err_t err =
            sbx_fs_write(tmp, text, strlen(text), 0600, errstr, errstr_size);
        if (err)
                return err;
        fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || fsync(fd) || rename(tmp, path))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                 path, strerror(errno));
        if (fd >= 0)
                close(fd);
        if (err) {
                unlink(tmp);
                return err;
        }
        sbx_fmt(dir, sizeof(dir), "%s", path);
        if ((slash = strrchr(dir, '/')))
                *slash = '\0';
        if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
                fsync(dfd);
                close(dfd);
        }
        return SBX_OK;
}

sbx_err_t sbx_layers_snap_write(sbx_layers_t *s,
                                const sbx_snap_t *r,
                                uint64_t size,
                                uint64_t entries,
                                char *errstr,
                                size_t errstr_size)
{
        char tmp[1024], path[1024], when[32], *text;
        time_t now     = time(NULL);
        json_t *layers = json_array(), *j;
        struct tm tm;
        sbx_err_t err;

        gmtime_r(&now, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        for (size_t i = 0; i < r->n; i++)
                json_array_append_new(
                    layers, json_pack("{s:s, s:s, s:I, s:I}", "target",
                                      r->layers[i].target, "digest",
                                      r->layers[i].digest, "size_bytes",
                                      (json_int_t)r->layers[i].size, "entries",
                                      (json_int_t)r->layers[i].entries));
        j = json_pack("{s:s, s:s?, s:s, s:s, s:o, s:I, s:I, s:s}", "id", r->id,
                      "parent", r->parent[0] ? r->parent : NULL, "base",
                      r->base, "digest", r->digest, "layers", layers,
                      "size_bytes", (json_int_t)size, "entries",
                      (json_int_t)entries, "created_at", when);
        text = json_dumps(j, JSON_INDENT(1) | JSON_SORT_KEYS);
        sbx_assert(j && text);
        err =
            write_durably(sbx_layers_work_path(s, "staging", tmp, sizeof(tmp)),
                          sbx_layers_snap_path(s, r->id, path, sizeof(path)),
                          text, errstr, errstr_size);
        free(text);
        json_decref(j);
        return err;
}

/* sha256 naming a fork: its base and its chain, newest first. */
static void fork_digest(const char *base,
                        const sbx_snap_t *chain,
                        size_t n,
                        char out[SBX_LAYER_DIGEST_SIZE])
{
        sbx_sha256_t *h = sbx_sha256_new();
        char hex[SBX_SHA256_HEX_LEN + 1], line[256];
        sbx_fmt(line, sizeof(line), "sbx fork v1\nbase %s\n", base);
        sbx_sha256_update(h, line, strlen(line));
        for (size_t i = 0; i < n; i++) {
                sbx_fmt(line, sizeof(line), "snapshot %s %s\n", chain[i].id,
                        chain[i].digest);
                sbx_sha256_update(h, line, strlen(line));
        }
        sbx_sha256_hex_final(h, hex);
        sbx_sha256_destroy(h);
        sbx_fmt(out, SBX_LAYER_DIGEST_SIZE, "sha256:%s", hex);
}

/* Each stack is one overlayfs mount whose options (the lower dirs, ':'
 * separated, plus upper and work) must fit in a page. */
static sbx_err_t options_fit(const sbx_template_t *t,
                             char *errstr,
                             size_t errstr_size)
{
        for (size_t i = 0; i <= sbx_template_sub_count(t); i++) {
                size_t n   = i ? sbx_template_sub_layer_count(t, i - 1)
                               : sbx_template_layer_count(t),
                       len = 0;
                for (size_t j = 0; j < n; j++)
                        len += strlen(i ? sbx_template_sub_layer(t, i - 1, j)
                                        : sbx_template_layer(t, j)) +
                               1;
                if (len > SBX_LAYERS_MAX_LOWERS_LEN)
                        return sbx_seterr(
                            errstr, errstr_size, SBX_ERR_TOOBIG,
                            "fork %s: its layer paths take %zu bytes in one "
                            "overlayfs mount, more than %d (a shorter store "
                            "path or a shorter chain)",
                            sbx_template_name(t), len,
                            SBX_LAYERS_MAX_LOWERS_LEN);
        }
        return SBX_OK;
}

/* Loads the chain of @p id (newest first) into @p chain. */
static sbx_err_t load_chain(const sbx_layers_t *s,
                            const char *id,
                            const char *base,
                            sbx_snap_t *chain,
                            size_t *ret_n,
                            char *errstr,
                            size_t errstr_size)
{
        size_t n = 0;
        for (const char *p = id; *p; p = chain[n++].parent) {
                sbx_err_t err;
                if (n == SBX_LAYERS_MAX_CHAIN)
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_TOOBIG,
                                          "snapshot chain of %s is deeper "
                                          "than %d",
                                          id, SBX_LAYERS_MAX_CHAIN);
                if ((err = sbx_layers_snap_load(s, p, &chain[n], errstr,
                                                errstr_size)))
                        return err;
                if (strcmp(chain[n].base, base))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "snapshot %s was taken on template "
                                          "%s, not on %s",
                                          p, chain[n].base, base);
        }
        *ret_n = n;
        return SBX_OK;
}

sbx_err_t sbx_layers_fork_template(sbx_layers_t *s,
                                   const sbx_template_t *base,
                                   const char *snapshot_id,
                                   sbx_template_t **ret,
                                   char *errstr,
                                   size_t errstr_size)
{
        sbx_snap_t *chain = sbx_calloc(SBX_LAYERS_MAX_CHAIN, sizeof(*chain));
        sbx_template_t *t = NULL;
        char digest[SBX_LAYER_DIGEST_SIZE], name[256], dir[1024];
        struct stat st;
        size_t n      = 0;
        sbx_err_t err = SBX_OK;

        if (!sbx_layers_id_ok(snapshot_id))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "'%s' is not a snapshot id",
                                 snapshot_id ? snapshot_id : "");
        else if (sbx_template_snapshot(base))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                 "template %s is a fork itself: fork from "
                                 "its base",
                                 sbx_template_name(base));
        else
                err = load_chain(s, snapshot_id, sbx_template_digest(base),
                                 chain, &n, errstr, errstr_size);
        if (err)
                goto done;
        fork_digest(sbx_template_digest(base), chain, n, digest);
        t = sbx_template_fork(base,
                              sbx_fmt(name, sizeof(name), "%s@%s",
                                      sbx_template_name(base), snapshot_id),
                              digest, snapshot_id);
        for (size_t i = n; !err && i-- > 0;) /* oldest first, each on top */
                for (size_t j = 0; !err && j < chain[i].n; j++) {
                        const sbx_layer_ref_t *l = &chain[i].layers[j];
                        sbx_layers_layer_dir(s, l->digest, dir, sizeof(dir));
                        if (stat(dir, &st) || !S_ISDIR(st.st_mode))
                                err = sbx_seterr(
                                    errstr, errstr_size, SBX_ERR_NOENT,
                                    "layer %s of snapshot %s is missing",
                                    l->digest, chain[i].id);
                        else
                                err = sbx_template_push(t, l->target, dir,
                                                        errstr, errstr_size);
                }
        if (!err)
                err = options_fit(t, errstr, errstr_size);
done:
        free(chain);
        if (err) {
                sbx_template_destroy(t);
                return err;
        }
        *ret = t;
        return SBX_OK;
}

/* Disk space of the tree under directory @p fd (closed here). */
static uint64_t tree_bytes(int fd, int depth)
{
        DIR *d = fdopendir(fd);
        struct dirent *e;
        uint64_t total = 0;

        if (!d) {
                close(fd);
                return 0;
        }
        while ((e = readdir(d))) {
                struct stat st;
                int sub;
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
                    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
                        continue;
                total += (uint64_t)st.st_blocks * 512;
                if (S_ISDIR(st.st_mode) && depth < 256 &&
                    (sub = openat(
                         dirfd(d), e->d_name,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
                        total += tree_bytes(sub, depth + 1);
        }
        closedir(d);
        return total;
}

/* Every snapshot record in the store; *ret_all is the caller's. */
static sbx_err_t load_all(const sbx_layers_t *s,
                          sbx_snap_t **ret_all,
                          size_t *ret_n,
                          char *errstr,
                          size_t errstr_size)
{
        char dir[1024];
        struct dirent **names = NULL;
        sbx_snap_t *all       = NULL;
        size_t n              = 0;
        sbx_err_t err         = SBX_OK;
        int k = scandir(sbx_fmt(dir, sizeof(dir), "%s/snapshots", s->dir),
                        &names, NULL, alphasort);

        if (k < 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  dir, strerror(errno));
        all = sbx_calloc((size_t)k + 1, sizeof(*all));
        for (int i = 0; i < k; i++) {
                char id[SBX_SNAPSHOT_ID_SIZE];
                const char *nm = names[i]->d_name;
                size_t nl      = strlen(nm);
                if (!err && nl == SBX_SNAPSHOT_ID_SIZE - 1 + 5 &&
                    !strcmp(nm + nl - 5, ".json") &&
                    sbx_layers_id_ok(
                        sbx_fmt(id, sizeof(id), "%.*s", (int)(nl - 5), nm)))
                        err = sbx_layers_snap_load(s, id, &all[n++], errstr,
                                                   errstr_size);
                free(names[i]);
        }
        free(names);
        if (err) {
                free(all);
                return err;
        }
        *ret_all = all;
        *ret_n   = n;
        return SBX_OK;
}

static long find(const sbx_snap_t *all, size_t n, const char *id)
{
        for (size_t i = 0; i < n; i++)
                if (!strcmp(all[i].id, id))
                        return (long)i;
        return -1;
}

/* Marks the kept snapshots and their ancestors. */
static void mark(const sbx_snap_t *all,
                 size_t n,
                 const char *const *keep,
                 size_t n_keep,
                 char *kept)
{
        for (size_t k = 0; k < n_keep; k++) {
                long i = find(all, n, keep[k]);
                for (int d = 0; i >= 0 && !kept[i] && d <= SBX_LAYERS_MAX_CHAIN;
                     d++) {
                        kept[i] = 1;
                        i = all[i].parent[0] ? find(all, n, all[i].parent) : -1;
                }
        }
}

static int referenced(const sbx_snap_t *all,
                      size_t n,
                      const char *kept,
                      const char *layer_name)
{
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; kept[i] && j < all[i].n; j++)
                        if (!strcmp(all[i].layers[j].digest + 7,
                                    layer_name + 7))
                                return 1;
        return 0;
}

static sbx_err_t to_trash(sbx_layers_t *s,
                          const char *path,
                          char *errstr,
                          size_t errstr_size)
{
        char dst[1024];
        if (rename(path, sbx_layers_work_path(s, "trash", dst, sizeof(dst))))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "rename %s to %s: %s", path, dst,
                                  strerror(errno));
        return SBX_OK;
}

/* Moves unreferenced layers to the trash, counting them. */
static sbx_err_t drop_layers(sbx_layers_t *s,
                             const sbx_snap_t *all,
                             size_t n,
                             const char *kept,
                             size_t *ret_layers,
                             uint64_t *ret_bytes,
                             char *errstr,
                             size_t errstr_size)
{
        char dir[1024], p[1200];
        struct dirent **names = NULL;
        sbx_err_t err         = SBX_OK;
        int k = scandir(sbx_fmt(dir, sizeof(dir), "%s/layers", s->dir), &names,
                        NULL, alphasort);

        if (k < 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  dir, strerror(errno));
        for (int i = 0; i < k; i++) {
                const char *nm = names[i]->d_name;
                if (!err && !strncmp(nm, "sha256-", 7) && hex_ok(nm + 7, 64) &&
                    !referenced(all, n, kept, nm)) {
                        int fd;
                        sbx_fmt(p, sizeof(p), "%s/%s", dir, nm);
                        fd = open(
                            p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        *ret_bytes += fd >= 0 ? tree_bytes(fd, 0) : 0;
                        err = to_trash(s, p, errstr, errstr_size);
                        *ret_layers += !err;
                }
                free(names[i]);
        }
        free(names);
        return err;
}

sbx_err_t sbx_layers_gc(sbx_layers_t *s,
                        const char *const *keep,
                        size_t n_keep,
                        size_t *ret_snapshots,
                        size_t *ret_layers,
                        uint64_t *ret_freed_bytes,
                        char *errstr,
                        size_t errstr_size)
{
        sbx_snap_t *all = NULL;
        char *kept      = NULL, p[1024];
        size_t n = 0, snaps = 0, layers = 0;
        uint64_t bytes = 0;
        sbx_err_t err  = SBX_OK;
        int fd;

        for (size_t k = 0; k < n_keep; k++)
                if (!sbx_layers_id_ok(keep[k]))
                        return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                          "'%s' is not a snapshot id",
                                          keep[k] ? keep[k] : "");
        if ((fd = sbx_layers_lock(s, errstr, errstr_size)) < 0)
                return SBX_ERR_IO;
        err  = load_all(s, &all, &n, errstr, errstr_size);
        kept = sbx_calloc(n + 1, 1);
        if (!err)
                mark(all, n, keep, n_keep, kept);
        for (size_t i = 0; !err && i < n; i++)
                if (!kept[i] &&
                    !(err = to_trash(
                          s, sbx_layers_snap_path(s, all[i].id, p, sizeof(p)),
                          errstr, errstr_size)))
                        snaps++;
        if (!err)
                err = drop_layers(s, all, n, kept, &layers, &bytes, errstr,
                                  errstr_size);
        if (!err)
                err = clear_area(s, "trash", 0, errstr, errstr_size);
        close(fd);
        free(all);
        free(kept);
        if (err)
                return err;
        if (ret_snapshots)
                *ret_snapshots = snaps;
        if (ret_layers)
                *ret_layers = layers;
        if (ret_freed_bytes)
                *ret_freed_bytes = bytes;
        return SBX_OK;
}
