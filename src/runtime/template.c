/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Templates. The host template's generated layer is described first as a
 * list of entries; the same list is written to the manifest (whose sha256,
 * computed by sha256sum, is the digest) and then materialized, so the
 * digest and the layer cannot disagree. The layer directory is named after
 * the digest and built under a temporary name, then renamed into place:
 * a complete layer is never modified, and two processes racing to build
 * the same one both end up using the winner's.
 */
#include "runtime/template.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/spawn.h"

#define TEMPLATE_MAX_ENTRIES 4096
#define TEMPLATE_MAX_FILE    (64 << 20)

/* One overlay: a target path and its lower layers, topmost first. */
typedef struct stack_s {
        char *target;
        size_t n;
        char **lowers;
} stack_t;

struct sbx_template_s {
        char *name, *digest;
        char *base_digest; /* a fork's: the digest of the template below */
        char *snapshot;    /* a fork's: the snapshot it shows */
        size_t n_stacks;   /* stacks[0] is the root ("/") */
        stack_t *stacks;
};

/* The host template's layer directory holds two layers: "root" (the root
 * file system's) and "usr" (above the host's /usr: an opaque, empty
 * /usr/local, so the host administrator's own files — binaries, configs,
 * tokens in /usr/local/etc — are not in sandboxes). */
enum { LAYER_ROOT = 0, LAYER_USR = 1 };
static const char *const layer_names[] = {"root", "usr"};

typedef struct entry_s {
        char kind;  /* 'd' dir, 'o' opaque dir, 'f' file (text), 'c' copy
                       (host path), 'l' link */
        int layer;  /* LAYER_* */
        char *path; /* relative to the layer root */
        char *arg;  /* text, host path or link target */
        mode_t mode;
        uid_t owner;
} entry_t;

typedef struct skel_s {
        entry_t e[TEMPLATE_MAX_ENTRIES];
        size_t n;
} skel_t;

static const struct {
        const char *path;
        mode_t mode;
        uid_t owner;
} skel_dirs[] = {
    {"etc", 0755, 0},          {"etc/alternatives", 0755, 0},
    {"usr", 0755, 0},          {"proc", 0555, 0},
    {"sys", 0555, 0},          {"dev", 0755, 0},
    {"tmp", 01777, 0},         {"run", 0755, 0},
    {"run/sbx", 0755, 0},      {".sbx", 0755, 0},
    {"workspace", 0755, 1000}, {"root", 0700, 0},
    {"home", 0755, 0},         {"home/sandbox", 0755, 1000},
    {"var", 0755, 0},          {"var/tmp", 01777, 0},
    {"var/cache", 0755, 0},    {"var/lib", 0755, 0},
    {"var/log", 0755, 0},      {"opt", 0755, 0},
    {"mnt", 0755, 0},          {"srv", 0755, 0},
};

static const struct {
        const char *path, *text;
} skel_files[] = {
    {"etc/passwd",
     "root:x:0:0:root:/root:/bin/sh\n"
     "sandbox:x:1000:1000:sandbox:/home/sandbox:/bin/sh\n"
     "nobody:x:65534:65534:nobody:/nonexistent:"
     "/usr/sbin/nologin\n"},
    {"etc/group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n"},
    {"etc/hosts",
     "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n"
     "::1\tlocalhost ip6-localhost ip6-loopback\n"},
    {"etc/hostname", "sandbox\n"},
    {"etc/resolv.conf", ""},
    {"etc/nsswitch.conf",
     "passwd: files\ngroup: files\nshadow: files\n"
     "hosts: files dns\nnetworks: files\n"
     "protocols: files\nservices: files\n"},
};

/* Host files that hold no secret and that programs expect in /etc. */
static const char *const skel_copies[] = {
    "etc/ld.so.cache",
    "etc/services",
    "etc/protocols",
    "etc/debian_version",
};

/* Top-level directories that Debian's merged /usr makes symlinks. */
static const char *const merged_dirs[] = {"bin",   "sbin",  "lib",
                                          "lib32", "lib64", "libx32"};

static void skel_add(skel_t *s,
                     char kind,
                     const char *path,
                     const char *arg,
                     mode_t mode,
                     uid_t owner)
{
        sbx_assert(s->n < TEMPLATE_MAX_ENTRIES);
        s->e[s->n++] = (entry_t){
            kind, LAYER_ROOT, sbx_strdup(path), sbx_strdup(arg ? arg : ""),
            mode, owner};
}

static void skel_free(skel_t *s)
{
        for (size_t i = 0; i < s->n; i++) {
                free(s->e[i].path);
                free(s->e[i].arg);
        }
        free(s);
}

/* Adds @p lower at the bottom of the stack for @p target (made if new). */
static void stack_add(sbx_template_t *t, const char *target, const char *lower)
{
        stack_t *k = NULL;
        for (size_t i = 0; i < t->n_stacks; i++)
                if (!strcmp(t->stacks[i].target, target))
                        k = &t->stacks[i];
        if (!k) {
                t->stacks =
                    sbx_realloc(t->stacks, (t->n_stacks + 1) * sizeof(stack_t));
                k  = &t->stacks[t->n_stacks++];
                *k = (stack_t){sbx_strdup(target), 0, NULL};
        }
        k->lowers         = sbx_realloc(k->lowers, (k->n + 1) * sizeof(char *));
        k->lowers[k->n++] = sbx_strdup(lower);
}

/* Symlinks of /etc/alternatives, in name order (the digest needs one). */
static void skel_alternatives(skel_t *s)
{
        struct dirent **names = NULL;
        int n = scandir("/etc/alternatives", &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
                char host[512], rel[512], target[512];
                ssize_t len;
                sbx_fmt(host, sizeof(host), "/etc/alternatives/%s",
                        names[i]->d_name);
                len = readlink(host, target, sizeof(target) - 1);
                if (len > 0 && s->n < TEMPLATE_MAX_ENTRIES - 64) {
                        target[len] = '\0';
                        skel_add(s, 'l',
                                 sbx_fmt(rel, sizeof(rel), "%s", host + 1),
                                 target, 0777, 0);
                }
                free(names[i]);
        }
        free(names);
}

/* Describes the host layers in @p s and the host directories that become
 * sub-layers in @p subs (the caller stacks them). */
static sbx_err_t skel_plan(skel_t *s,
                           sbx_template_t *subs,
                           char *errstr,
                           size_t errstr_size)
{
        struct stat st;

        for (size_t i = 0; i < SBX_ARRAY_SIZE(skel_dirs); i++)
                skel_add(s, 'd', skel_dirs[i].path, NULL, skel_dirs[i].mode,
                         skel_dirs[i].owner);
        if (stat("/usr", &st) || !S_ISDIR(st.st_mode))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                                  "host template: /usr is not a directory");
        stack_add(subs, "/usr", "/usr");
        skel_add(s, 'o', "local", NULL, 0755, 0);
        s->e[s->n - 1].layer = LAYER_USR;
        for (size_t i = 0; i < SBX_ARRAY_SIZE(merged_dirs); i++) {
                char host[64], target[256];
                ssize_t len;
                sbx_fmt(host, sizeof(host), "/%s", merged_dirs[i]);
                if (lstat(host, &st))
                        continue;
                len = readlink(host, target, sizeof(target) - 1);
                if (len > 0) {
                        target[len] = '\0';
                        if (strncmp(target, "usr/", 4) &&
                            strncmp(target, "/usr/", 5))
                                return sbx_seterr(
                                    errstr, errstr_size, SBX_ERR_UNSUPPORTED,
                                    "host template: %s -> %s leaves /usr", host,
                                    target);
                        skel_add(s, 'l', merged_dirs[i], target, 0777, 0);
                } else if (S_ISDIR(st.st_mode)) {
                        skel_add(s, 'd', merged_dirs[i], NULL, 0755, 0);
                        stack_add(subs, host, host);
                }
        }
        for (size_t i = 0; i < SBX_ARRAY_SIZE(skel_files); i++)
                skel_add(s, 'f', skel_files[i].path, skel_files[i].text, 0644,
                         0);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(skel_copies); i++) {
                char host[256];
                sbx_fmt(host, sizeof(host), "/%s", skel_copies[i]);
                if (!stat(host, &st) && S_ISREG(st.st_mode))
                        skel_add(s, 'c', skel_copies[i], host, 0644, 0);
        }
        if (!stat("/usr/lib/os-release", &st))
                skel_add(s, 'l', "etc/os-release", "../usr/lib/os-release",
                         0777, 0);
        skel_add(s, 'l', "etc/localtime", "/usr/share/zoneinfo/Etc/UTC", 0777,
                 0);
        skel_alternatives(s);
        return SBX_OK;
}

static sbx_err_t skel_manifest(const skel_t *s,
                               const sbx_template_t *subs,
                               const char *path,
                               char *errstr,
                               size_t errstr_size)
{
        FILE *f         = fopen(path, "we");
        char *dpkg      = NULL;
        size_t dpkg_len = 0;
        sbx_err_t err;

        if (!f)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  path, strerror(errno));
        fprintf(f, "sbx host template v2\n");
        for (size_t i = 0; i < subs->n_stacks; i++)
                fprintf(f, "sub %s %s\n", subs->stacks[i].target,
                        subs->stacks[i].lowers[0]);
        for (size_t i = 0; i < s->n; i++) {
                const entry_t *e = &s->e[i];
                struct stat st;
                fprintf(f, "%s %c %s %04o %u", layer_names[e->layer], e->kind,
                        e->path, (unsigned)e->mode, (unsigned)e->owner);
                if (e->kind == 'f')
                        fprintf(f, " %zu\n%s", strlen(e->arg), e->arg);
                else if (e->kind == 'c' && !stat(e->arg, &st))
                        fprintf(f, " %lld %lld\n", (long long)st.st_size,
                                (long long)st.st_mtime);
                else
                        fprintf(f, " %s\n", e->arg);
        }
        err = sbx_read_file("/var/lib/dpkg/status", TEMPLATE_MAX_FILE, &dpkg,
                            &dpkg_len, errstr, errstr_size);
        if (!err) {
                fprintf(f, "dpkg-status %zu\n", dpkg_len);
                fwrite(dpkg, 1, dpkg_len, f);
        }
        free(dpkg);
        if (fclose(f) && !err)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                 path, strerror(errno));
        return err;
}

static sbx_err_t sha256_file(const char *path,
                             char out[65],
                             char *errstr,
                             size_t errstr_size)
{
        const char *argv[] = {"/usr/bin/sha256sum", path, NULL};
        sbx_spawn_opts_t o = {.timeout_ms = 30000, .max_output = 4096};
        sbx_spawn_result_t r;
        sbx_err_t err = sbx_spawn_run(argv, &o, &r, errstr, errstr_size);
        if (!err && (r.exit_code || r.out_len < 64))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "sha256sum %s: exit %d: %s", path, r.exit_code,
                                 r.err);
        if (!err) {
                memcpy(out, r.out, 64);
                out[64] = '\0';
        }
        sbx_spawn_result_clear(&r);
        return err;
}

static sbx_err_t skel_build(const skel_t *s,
                            const char *dir,
                            char *errstr,
                            size_t errstr_size)
{
        char p[1024];
        sbx_err_t err = sbx_fs_mkdir(dir, 0755, 0, 0, errstr, errstr_size);
        for (size_t i = 0; !err && i < SBX_ARRAY_SIZE(layer_names); i++)
                err = sbx_fs_mkdir(
                    sbx_fmt(p, sizeof(p), "%s/%s", dir, layer_names[i]), 0755,
                    0, 0, errstr, errstr_size);
        for (size_t i = 0; !err && i < s->n; i++) {
                const entry_t *e = &s->e[i];
                char *data       = NULL;
                size_t len       = 0;
                sbx_fmt(p, sizeof(p), "%s/%s/%s", dir, layer_names[e->layer],
                        e->path);
                switch (e->kind) {
                case 'd':
                case 'o':
                        err = sbx_fs_mkdir(p, e->mode, e->owner, e->owner,
                                           errstr, errstr_size);
                        /* overlayfs: hide whatever the layers below have */
                        if (!err && e->kind == 'o' &&
                            setxattr(p, "trusted.overlay.opaque", "y", 1, 0))
                                err = sbx_seterr(
                                    errstr, errstr_size, SBX_ERR_IO,
                                    "%s: set opaque: %s", p, strerror(errno));
                        break;
                case 'f':
                        err = sbx_fs_write(p, e->arg, strlen(e->arg), e->mode,
                                           errstr, errstr_size);
                        break;
                case 'c':
                        err = sbx_read_file(e->arg, TEMPLATE_MAX_FILE, &data,
                                            &len, errstr, errstr_size);
                        if (!err)
                                err = sbx_fs_write(p, data, len, e->mode,
                                                   errstr, errstr_size);
                        free(data);
                        break;
                default:
                        if (symlink(e->arg, p))
                                err = sbx_seterr(errstr, errstr_size,
                                                 SBX_ERR_IO, "symlink %s: %s",
                                                 p, strerror(errno));
                }
        }
        return err;
}

sbx_template_t *sbx_template_host_new(const char *dir,
                                      char *errstr,
                                      size_t errstr_size)
{
        sbx_template_t *t    = sbx_calloc(1, sizeof(*t));
        sbx_template_t *subs = sbx_calloc(1, sizeof(*subs));
        skel_t *s            = sbx_calloc(1, sizeof(*s));
        char tmp_manifest[1024], manifest[1024], layer[1024], tmp[1024];
        char hex[65];
        struct stat st;

        t->name = sbx_strdup("host");
        if (!sbx_fs_path_ok(dir) || dir[0] != '/') {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "template dir '%s': need an absolute path of "
                           "[A-Za-z0-9/_.+-]",
                           dir ? dir : "");
                goto fail;
        }
        if (sbx_fs_mkdir(dir, 0755, 0, 0, errstr, errstr_size) ||
            skel_plan(s, subs, errstr, errstr_size))
                goto fail;
        sbx_fmt(tmp_manifest, sizeof(tmp_manifest), "%s/.manifest.%ld", dir,
                (long)gettid());
        if (skel_manifest(s, subs, tmp_manifest, errstr, errstr_size) ||
            sha256_file(tmp_manifest, hex, errstr, errstr_size)) {
                unlink(tmp_manifest);
                goto fail;
        }
        sbx_fmt(layer, sizeof(layer), "%s/%s", dir, hex);
        sbx_fmt(manifest, sizeof(manifest), "%s/%s.manifest", dir, hex);
        if (rename(tmp_manifest, manifest)) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s", manifest,
                           strerror(errno));
                unlink(tmp_manifest);
                goto fail;
        }
        if (stat(layer, &st)) {
                sbx_fmt(tmp, sizeof(tmp), "%s/.build.%ld", dir, (long)gettid());
                sbx_fs_rmtree(tmp, NULL, 0);
                if (skel_build(s, tmp, errstr, errstr_size)) {
                        sbx_fs_rmtree(tmp, NULL, 0);
                        goto fail;
                }
                if (rename(tmp, layer))
                        sbx_fs_rmtree(tmp, NULL, 0); /* a racer won */
        }
        t->digest = sbx_strdup(sbx_fmt(tmp, sizeof(tmp), "sha256:%s", hex));
        stack_add(t, "/", sbx_fmt(tmp, sizeof(tmp), "%s/root", layer));
        stack_add(t, "/usr", sbx_fmt(tmp, sizeof(tmp), "%s/usr", layer));
        for (size_t i = 0; i < subs->n_stacks; i++)
                stack_add(t, subs->stacks[i].target, subs->stacks[i].lowers[0]);
        skel_free(s);
        sbx_template_destroy(subs);
        return t;
fail:
        skel_free(s);
        sbx_template_destroy(subs);
        sbx_template_destroy(t);
        return NULL;
}

sbx_template_t *sbx_template_dir_new(const char *dir,
                                     char *errstr,
                                     size_t errstr_size)
{
        sbx_template_t *t = sbx_calloc(1, sizeof(*t));
        char path[1024], *digest = NULL;
        const char *base;
        struct stat st;

        if (!sbx_fs_path_ok(dir) || dir[0] != '/') {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "template dir '%s': need an absolute path of "
                           "[A-Za-z0-9/_.+-]",
                           dir ? dir : "");
                goto fail;
        }
        base    = strrchr(dir, '/') + 1;
        t->name = sbx_strdup(*base ? base : dir);
        sbx_fmt(path, sizeof(path), "%s/digest", dir);
        if (sbx_read_file(path, 4096, &digest, NULL, errstr, errstr_size))
                goto fail;
        sbx_strtrim(digest);
        if (strlen(digest) != 71 || strncmp(digest, "sha256:", 7) ||
            strspn(digest + 7, "0123456789abcdef") != 64) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "%s: not a sha256:<64 hex> digest", path);
                goto fail;
        }
        sbx_fmt(path, sizeof(path), "%s/rootfs", dir);
        if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_NOENT,
                           "%s: no such directory (build it with "
                           "deploy/local/template.sh)",
                           path);
                goto fail;
        }
        t->digest = digest;
        stack_add(t, "/", path);
        return t;
fail:
        free(digest);
        sbx_template_destroy(t);
        return NULL;
}

void sbx_template_destroy(sbx_template_t *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < t->n_stacks; i++) {
                for (size_t j = 0; j < t->stacks[i].n; j++)
                        free(t->stacks[i].lowers[j]);
                free(t->stacks[i].lowers);
                free(t->stacks[i].target);
        }
        free(t->stacks);
        free(t->name);
        free(t->digest);
        free(t->base_digest);
        free(t->snapshot);
        free(t);
}

const char *sbx_template_name(const sbx_template_t *t)
{
        return t->name;
}

const char *sbx_template_digest(const sbx_template_t *t)
{
        return t->digest;
}

size_t sbx_template_layer_count(const sbx_template_t *t)
{
        return t->n_stacks ? t->stacks[0].n : 0;
}

const char *sbx_template_layer(const sbx_template_t *t, size_t i)
{
        sbx_assert(t->n_stacks && i < t->stacks[0].n);
        return t->stacks[0].lowers[i];
}

size_t sbx_template_sub_count(const sbx_template_t *t)
{
        return t->n_stacks ? t->n_stacks - 1 : 0;
}

const char *sbx_template_sub_target(const sbx_template_t *t, size_t i)
{
        sbx_assert(i + 1 < t->n_stacks);
        return t->stacks[i + 1].target;
}

size_t sbx_template_sub_layer_count(const sbx_template_t *t, size_t i)
{
        sbx_assert(i + 1 < t->n_stacks);
        return t->stacks[i + 1].n;
}

const char *sbx_template_sub_layer(const sbx_template_t *t, size_t i, size_t j)
{
        sbx_assert(i + 1 < t->n_stacks && j < t->stacks[i + 1].n);
        return t->stacks[i + 1].lowers[j];
}

const char *sbx_template_base_digest(const sbx_template_t *t)
{
        return t->base_digest ? t->base_digest : t->digest;
}

const char *sbx_template_snapshot(const sbx_template_t *t)
{
        return t->snapshot;
}

sbx_template_t *sbx_template_fork(const sbx_template_t *base,
                                  const char *name,
                                  const char *digest,
                                  const char *snapshot)
{
        sbx_template_t *t = sbx_calloc(1, sizeof(*t));
        sbx_assert(!base->snapshot);
        t->name        = sbx_strdup(name);
        t->digest      = sbx_strdup(digest);
        t->base_digest = sbx_strdup(base->digest);
        t->snapshot    = sbx_strdup(snapshot);
        for (size_t i = 0; i < base->n_stacks; i++)
                for (size_t j = 0; j < base->stacks[i].n; j++)
                        stack_add(t, base->stacks[i].target,
                                  base->stacks[i].lowers[j]);
        return t;
}

sbx_err_t sbx_template_push(sbx_template_t *t,
                            const char *target,
                            const char *layer,
                            char *errstr,
                            size_t errstr_size)
{
        stack_t *k = NULL;
        char *top  = NULL;
        for (size_t i = 0; i < t->n_stacks; i++)
                if (!strcmp(t->stacks[i].target, target))
                        k = &t->stacks[i];
        if (!k)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                  "template %s has no layer stack at %s",
                                  t->name, target);
        for (size_t j = 0; j < k->n && !top; j++)
                if (!strcmp(k->lowers[j], layer)) {
                        /* overlayfs refuses a directory twice in one mount;
                         * the copy below the top one adds nothing */
                        top = k->lowers[j];
                        memmove(&k->lowers[j], &k->lowers[j + 1],
                                (k->n - j - 1) * sizeof(char *));
                        k->n--;
                }
        k->lowers = sbx_realloc(k->lowers, (k->n + 1) * sizeof(char *));
        memmove(&k->lowers[1], &k->lowers[0], k->n * sizeof(char *));
        k->lowers[0] = top ? top : sbx_strdup(layer);
        k->n++;
        return SBX_OK;
}

json_t *sbx_template_describe(const sbx_template_t *t)
{
        json_t *stacks = json_array();
        for (size_t i = 0; i < t->n_stacks; i++)
                json_array_append_new(stacks, json_string(t->stacks[i].target));
        return json_pack("{s:s, s:s, s:s?, s:o}", "digest", t->digest, "base",
                         sbx_template_base_digest(t), "snapshot", t->snapshot,
                         "stacks", stacks);
}
