/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Upper dir -> lower layer (runtime/layercopy.h). One depth-first walk
 * copies and digests at once. Each entry is looked at with fstatat
 * (AT_SYMLINK_NOFOLLOW), then — directories and regular files only —
 * opened by its single name relative to its parent's descriptor with
 * O_NOFOLLOW and compared (device, inode, type) with what was looked at,
 * so a name swapped for a symlink between the two leads nowhere. Symlinks
 * are read with readlinkat and recreated, never opened. Destination
 * entries are made 0600/0700 and get their owner, then their mode (chown
 * clears set-id bits), then their times; a directory's times are set
 * after its children, which would change them.
 */
#include "runtime/layercopy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/sha256.h"

#define COPY_MAX_DEPTH 128
#define COPY_BUF_SIZE  (1 << 20)
#define OVL_PREFIX     "trusted.overlay."
#define OVL_OPAQUE     OVL_PREFIX "opaque"

typedef struct copy_s {
        const sbx_layer_limits_t *lim;
        sbx_layer_count_t *count;
        sbx_sha256_t *layer; /* the manifest */
        sbx_sha256_t *file;  /* one file's content */
        char *buf;           /* COPY_BUF_SIZE */
        char *xattrs;        /* XATTR_LIST_MAX */
        char path[PATH_MAX]; /* of the entry at hand, "" for the root */
        size_t plen;
        char *errstr;
        size_t errstr_size;
} copy_t;

static const char *where(const copy_t *c)
{
        return c->plen ? c->path : "/";
}

static sbx_err_t fail(copy_t *c, sbx_err_t err, const char *what, int e)
{
        return sbx_seterr(c->errstr, c->errstr_size, err,
                          "snapshot: %s: %s%s%s", where(c), what, e ? ": " : "",
                          e ? strerror(e) : "");
}

/* Adds one manifest record: fields NUL-terminated, none contains NUL. */
static void record(copy_t *c,
                   char type,
                   const struct stat *st,
                   uint64_t size,
                   const char *extra)
{
        char attrs[96];
        int n         = snprintf(attrs, sizeof(attrs), "%c %o %u %u %llu", type,
                                 (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid,
                                 (unsigned)st->st_gid, (unsigned long long)size);
        const char *p = where(c);
        sbx_sha256_update(c->layer, p, strlen(p) + 1);
        sbx_sha256_update(c->layer, attrs, (size_t)n + 1);
        sbx_sha256_update(c->layer, extra, strlen(extra) + 1);
}

/* Reads the trusted.overlay.* attributes of @p fd: *ret_opaque for an
 * opaque directory; what a copy cannot carry is refused. */
static sbx_err_t ovl_attrs(copy_t *c, int fd, int is_dir, int *ret_opaque)
{
        ssize_t n       = flistxattr(fd, c->xattrs, XATTR_LIST_MAX);
        const size_t pl = strlen(OVL_PREFIX);

        *ret_opaque = 0;
        if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
                return SBX_OK;
        if (n < 0)
                return fail(c, SBX_ERR_IO, "list xattrs", errno);
        for (char *p = c->xattrs; p < c->xattrs + n; p += strlen(p) + 1) {
                char v[8];
                ssize_t vl;
                if (strncmp(p, OVL_PREFIX, pl))
                        continue;
                if (!strcmp(p, OVL_OPAQUE)) {
                        vl = fgetxattr(fd, p, v, sizeof(v));
                        if (!is_dir || vl != 1 || v[0] != 'y')
                                return fail(c, SBX_ERR_UNSUPPORTED,
                                            "opaque attribute other than a "
                                            "directory's \"y\"",
                                            0);
                        *ret_opaque = 1;
                } else if (!strcmp(p + pl, "redirect") ||
                           !strcmp(p + pl, "metacopy") ||
                           !strcmp(p + pl, "whiteout")) {
                        char msg[128];
                        return fail(c, SBX_ERR_UNSUPPORTED,
                                    sbx_fmt(msg, sizeof(msg),
                                            "has %s (overlayfs redirect_dir, "
                                            "metacopy or xattr whiteouts are "
                                            "not supported)",
                                            p),
                                    0);
                }
        }
        return SBX_OK;
}

/* Opens child @p name of @p dfd, which must still be what @p st saw. */
static sbx_err_t open_child(copy_t *c,
                            int dfd,
                            const char *name,
                            int flags,
                            const struct stat *st,
                            int *ret_fd)
{
        struct stat now;
        int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return fail(c, SBX_ERR_IO, "open", errno);
        if (fstat(fd, &now) || now.st_dev != st->st_dev ||
            now.st_ino != st->st_ino ||
            (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
                close(fd);
                return fail(c, SBX_ERR_CONFLICT,
                            "changed while it was copied (is the sandbox "
                            "frozen?)",
                            0);
        }
        *ret_fd = fd;
        return SBX_OK;
}

static sbx_err_t set_attrs(copy_t *c, int fd, const struct stat *st)
{
        const struct timespec ts[2] = {st->st_atim, st->st_mtim};
        if (fchown(fd, st->st_uid, st->st_gid) ||
            fchmod(fd, st->st_mode & 07777) || futimens(fd, ts))
                return fail(c, SBX_ERR_IO, "set attributes", errno);
        return SBX_OK;
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory @p fd, sorted; bounded by the entry limit. */
static sbx_err_t list_names(copy_t *c, int fd, char ***ret, size_t *ret_n)
{
        int dup_fd   = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        DIR *d       = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        sbx_err_t err = SBX_OK;

        if (!d) {
                if (dup_fd >= 0)
                        close(dup_fd);
                return fail(c, SBX_ERR_IO, "list", errno);
        }
        while (!err && (errno = 0, e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (c->count->entries + n >= c->lim->max_entries) {
                        err = fail(c, SBX_ERR_TOOBIG,
                                   "more entries than a snapshot may have", 0);
                        break;
                }
                if (n == cap) {
                        cap   = cap ? cap * 2 : 16;
                        names = sbx_realloc(names, cap * sizeof(*names));
                }
                names[n++] = sbx_strdup(e->d_name);
        }
        if (!err && errno)
                err = fail(c, SBX_ERR_IO, "list", errno);
        closedir(d);
        if (n)
                qsort(names, n, sizeof(*names), cmp_name);
        *ret   = names;
        *ret_n = n;
        return err;
}

static sbx_err_t copy_dir(copy_t *c, int sfd, int dfd, int depth);

/* Copies directory @p sfd (looked at as @p st) into the new @p dfd. */
static sbx_err_t copy_tree(copy_t *c,
                           int sfd,
                           int dfd,
                           const struct stat *st,
                           int depth)
{
        int opaque    = 0;
        sbx_err_t err = ovl_attrs(c, sfd, 1, &opaque);
        if (err)
                return err;
        record(c, opaque ? 'o' : 'd', st, 0, "");
        err = copy_dir(c, sfd, dfd, depth);
        if (!err && opaque && fsetxattr(dfd, OVL_OPAQUE, "y", 1, 0))
                err = fail(c, SBX_ERR_IO, "set " OVL_OPAQUE, errno);
        if (!err)
                err = set_attrs(c, dfd, st);
        return err;
}

static sbx_err_t copy_subdir(copy_t *c,
                             int sfd,
                             int dfd,
                             const char *name,
                             const struct stat *st,
                             int depth)
{
        int s = -1, d = -1;
        sbx_err_t err;

        if (depth >= COPY_MAX_DEPTH)
                return fail(c, SBX_ERR_TOOBIG, "directories nested too deep",
                            0);
        err = open_child(c, sfd, name, O_RDONLY | O_DIRECTORY, st, &s);
        if (err)
                return err;
        if (mkdirat(dfd, name, 0700) ||
            (d = openat(dfd, name,
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                err = fail(c, SBX_ERR_IO, "make directory", errno);
        else
                err = copy_tree(c, s, d, st, depth + 1);
        close(s);
        if (d >= 0)
                close(d);
        return err;
}

static sbx_err_t write_all(copy_t *c, int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return fail(c, SBX_ERR_IO, "write", w ? errno : EIO);
                p += w;
                n -= (size_t)w;
        }
        return SBX_OK;
}

/* Copies @p s to @p d, hashing it, checking it has st_size bytes. */
static sbx_err_t copy_data(copy_t *c, int s, int d, const struct stat *st)
{
        uint64_t total = 0;
        sbx_err_t err  = SBX_OK;
        for (;;) {
                ssize_t n = read(s, c->buf, COPY_BUF_SIZE);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return fail(c, SBX_ERR_IO, "read", errno);
                if (n == 0)
                        break;
                total += (uint64_t)n;
                if (total > (uint64_t)st->st_size)
                        break;
                sbx_sha256_update(c->file, c->buf, (size_t)n);
                if ((err = write_all(c, d, c->buf, (size_t)n)))
                        return err;
        }
        if (total != (uint64_t)st->st_size)
                return fail(c, SBX_ERR_CONFLICT,
                            "changed size while it was copied (is the "
                            "sandbox frozen?)",
                            0);
        return SBX_OK;
}

static sbx_err_t copy_file(copy_t *c,
                           int sfd,
                           int dfd,
                           const char *name,
                           const struct stat *st)
{
        char hex[SBX_SHA256_HEX_LEN + 1];
        int s, d = -1, opaque;
        sbx_err_t err;

        if ((uint64_t)st->st_size > c->lim->max_bytes - c->count->bytes)
                return fail(c, SBX_ERR_TOOBIG,
                            "more file content than a snapshot may have", 0);
        err = open_child(c, sfd, name, O_RDONLY | O_NONBLOCK, st, &s);
        if (err)
                return err;
        err = ovl_attrs(c, s, 0, &opaque);
        if (!err) {
                d = openat(dfd, name,
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           0600);
                if (d < 0)
                        err = fail(c, SBX_ERR_IO, "create", errno);
        }
        if (!err)
                err = copy_data(c, s, d, st);
        if (!err)
                err = set_attrs(c, d, st);
        sbx_sha256_hex_final(c->file, hex);
        if (!err) {
                c->count->bytes += (uint64_t)st->st_size;
                record(c, 'f', st, (uint64_t)st->st_size, hex);
        }
        close(s);
        if (d >= 0)
                close(d);
        return err;
}

/* Owner and times of the entry @p name of @p dfd, not following it. */
static sbx_err_t set_attrs_at(copy_t *c,
                              int dfd,
                              const char *name,
                              const struct stat *st)
{
        const struct timespec ts[2] = {st->st_atim, st->st_mtim};
        if (fchownat(dfd, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) ||
            utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW))
                return fail(c, SBX_ERR_IO, "set attributes", errno);
        return SBX_OK;
}

static sbx_err_t copy_link(copy_t *c,
                           int sfd,
                           int dfd,
                           const char *name,
                           const struct stat *st)
{
        char target[PATH_MAX];
        ssize_t n = readlinkat(sfd, name, target, sizeof(target));
        if (n < 0)
                return fail(c, SBX_ERR_IO, "readlink", errno);
        if ((size_t)n >= sizeof(target))
                return fail(c, SBX_ERR_TOOBIG, "symlink target too long", 0);
        target[n] = '\0';
        if (symlinkat(target, dfd, name))
                return fail(c, SBX_ERR_IO, "symlink", errno);
        record(c, 'l', st, (uint64_t)n, target);
        return set_attrs_at(c, dfd, name, st);
}

static sbx_err_t copy_whiteout(copy_t *c,
                               int dfd,
                               const char *name,
                               const struct stat *st)
{
        if (mknodat(dfd, name, S_IFCHR | (st->st_mode & 07777), makedev(0, 0)))
                return fail(c, SBX_ERR_IO, "make whiteout", errno);
        record(c, 'w', st, 0, "");
        return set_attrs_at(c, dfd, name, st);
}

static sbx_err_t copy_entry(copy_t *c,
                            int sfd,
                            int dfd,
                            const char *name,
                            int depth)
{
        size_t old = c->plen, nl = strlen(name);
        struct stat st;
        sbx_err_t err;

        if (old + 1 + nl >= sizeof(c->path))
                return fail(c, SBX_ERR_TOOBIG, "path too long", 0);
        c->path[c->plen++] = '/';
        memcpy(c->path + c->plen, name, nl + 1);
        c->plen += nl;
        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW))
                err = fail(c, SBX_ERR_IO, "stat", errno);
        else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
                err = (c->count->skipped++, SBX_OK);
        else if (++c->count->entries > c->lim->max_entries)
                err = fail(c, SBX_ERR_TOOBIG,
                           "more entries than a snapshot may have", 0);
        else if (S_ISDIR(st.st_mode))
                err = copy_subdir(c, sfd, dfd, name, &st, depth);
        else if (S_ISREG(st.st_mode))
                err = copy_file(c, sfd, dfd, name, &st);
        else if (S_ISLNK(st.st_mode))
                err = copy_link(c, sfd, dfd, name, &st);
        else if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0))
                err = copy_whiteout(c, dfd, name, &st);
        else
                err =
                    fail(c, SBX_ERR_UNSUPPORTED,
                         "a device node (only whiteouts, 0/0, are copied)", 0);
        c->plen      = old;
        c->path[old] = '\0';
        return err;
}

static sbx_err_t copy_dir(copy_t *c, int sfd, int dfd, int depth)
{
        char **names  = NULL;
        size_t n      = 0, i;
        sbx_err_t err = list_names(c, sfd, &names, &n);
        for (i = 0; !err && i < n; i++)
                err = copy_entry(c, sfd, dfd, names[i], depth);
        for (i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return err;
}

sbx_err_t sbx_layer_copy(const char *upper,
                         const char *dst,
                         const sbx_layer_limits_t *lim,
                         sbx_layer_count_t *count,
                         char ret_digest[SBX_LAYER_DIGEST_SIZE],
                         char *errstr,
                         size_t errstr_size)
{
        copy_t *c = sbx_calloc(1, sizeof(*c));
        char hex[SBX_SHA256_HEX_LEN + 1];
        struct stat st;
        int s, d = -1;
        sbx_err_t err;

        *c = (copy_t){.lim         = lim,
                      .count       = count,
                      .layer       = sbx_sha256_new(),
                      .file        = sbx_sha256_new(),
                      .buf         = sbx_malloc(COPY_BUF_SIZE),
                      .xattrs      = sbx_malloc(XATTR_LIST_MAX),
                      .errstr      = errstr,
                      .errstr_size = errstr_size};
        s  = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0 || fstat(s, &st))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                 upper, strerror(errno));
        else if (mkdir(dst, 0700) ||
                 (d = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                    O_CLOEXEC)) < 0)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s", dst,
                                 strerror(errno));
        else
                err = copy_tree(c, s, d, &st, 0);
        sbx_sha256_hex_final(c->layer, hex);
        if (!err)
                sbx_fmt(ret_digest, SBX_LAYER_DIGEST_SIZE, "sha256:%s", hex);
        if (s >= 0)
                close(s);
        if (d >= 0)
                close(d);
        sbx_sha256_destroy(c->layer);
        sbx_sha256_destroy(c->file);
        free(c->buf);
        free(c->xattrs);
        free(c);
        return err;
}
