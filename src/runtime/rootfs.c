/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sandbox's disk: a sparse ext4 image (no journal: the upper dir does not
 * outlive a host crash anyway) attached to a free loop device with
 * LO_FLAGS_AUTOCLEAR, so unmounting it also frees the device, and the
 * overlays of the template on top. Mounts are made with nosuid and nodev:
 * a set-uid file or a device node in a layer or an upper dir grants
 * nothing, and private: whatever the host's propagation, a sandbox's
 * root and sub-layers receive no later host mount (only its workspace
 * slot does, runtime/workspace.h). Undoing is driven by /proc/self/mountinfo,
 * never by memory, so a restarted daemon can wipe what a dead one mounted.
 */
#include "runtime/rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/spawn.h"

#define ROOTFS_MAX_MOUNTS 256

static const char *mkfs_path(void)
{
        static const char *const c[] = {"/usr/sbin/mkfs.ext4",
                                        "/sbin/mkfs.ext4"};
        for (size_t i = 0; i < SBX_ARRAY_SIZE(c); i++)
                if (!access(c[i], X_OK))
                        return c[i];
        return c[0];
}

static sbx_err_t make_image(const char *img,
                            int64_t disk_mb,
                            char *errstr,
                            size_t errstr_size)
{
        const char *argv[] = {mkfs_path(),
                              "-q",
                              "-F",
                              "-m",
                              "0",
                              "-O",
                              "^has_journal",
                              "-E",
                              "nodiscard,root_owner=0:0",
                              img,
                              NULL};
        sbx_spawn_opts_t o = {.timeout_ms = 60000, .max_output = 8192};
        sbx_spawn_result_t r;
        sbx_err_t err;
        int fd = open(img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        if (fd < 0)
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                  img, strerror(errno));
        if (ftruncate(fd, (off_t)disk_mb << 20)) {
                int e = errno;
                close(fd);
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "%s: truncate: %s", img, strerror(e));
        }
        close(fd);
        err = sbx_spawn_run(argv, &o, &r, errstr, errstr_size);
        if (!err && r.exit_code)
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "mkfs.ext4 %s: exit %d: %s", img, r.exit_code,
                                 sbx_strtrim(r.err));
        sbx_spawn_result_clear(&r);
        return err;
}

/* Attaches @p img to a free loop device and mounts it at @p mnt. */
static sbx_err_t mount_image(const char *img,
                             const char *mnt,
                             char *errstr,
                             size_t errstr_size)
{
        int ctl = -1, imgfd = -1, lfd = -1;
        char dev[64];
        sbx_err_t err = SBX_OK;

        ctl   = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        imgfd = open(img, O_RDWR | O_CLOEXEC);
        if (ctl < 0 || imgfd < 0) {
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO, "%s: %s",
                                 ctl < 0 ? "/dev/loop-control" : img,
                                 strerror(errno));
                goto done;
        }
        for (int tries = 0;; tries++) {
                struct loop_config cfg;
                int n = ioctl(ctl, LOOP_CTL_GET_FREE);
                if (n < 0 || tries == 16) {
                        err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                         "no free loop device: %s",
                                         strerror(errno));
                        goto done;
                }
                sbx_fmt(dev, sizeof(dev), "/dev/loop%d", n);
                lfd = open(dev, O_RDWR | O_CLOEXEC);
                if (lfd < 0)
                        continue;
                memset(&cfg, 0, sizeof(cfg));
                cfg.fd            = (uint32_t)imgfd;
                cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
                sbx_fmt((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s", img);
                if (!ioctl(lfd, LOOP_CONFIGURE, &cfg))
                        break;
                close(lfd); /* EBUSY: another process took it first */
                lfd = -1;
        }
        if (mount(dev, mnt, "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME, "") ||
            mount(NULL, mnt, NULL, MS_PRIVATE, NULL))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "mount %s (%s) on %s: %s", dev, img, mnt,
                                 strerror(errno));
done:
        if (lfd >= 0)
                close(lfd); /* the mount holds the device now */
        if (imgfd >= 0)
                close(imgfd);
        if (ctl >= 0)
                close(ctl);
        return err;
}

static sbx_err_t mount_overlay(const char *merged,
                               const char *const *lowers,
                               size_t n_lowers,
                               const char *upper,
                               const char *work,
                               char *errstr,
                               size_t errstr_size)
{
        size_t cap = 64 + strlen(upper) + strlen(work);
        char *opts;
        sbx_err_t err = SBX_OK;

        for (size_t i = 0; i < n_lowers; i++)
                cap += strlen(lowers[i]) + 1;
        opts = sbx_malloc(cap);
        strcpy(opts, "lowerdir=");
        for (size_t i = 0; i < n_lowers; i++) {
                if (i)
                        strcat(opts, ":");
                strcat(opts, lowers[i]);
        }
        strcat(opts, ",upperdir=");
        strcat(opts, upper);
        strcat(opts, ",workdir=");
        strcat(opts, work);
        if (mount("overlay", merged, "overlay", MS_NOSUID | MS_NODEV, opts) ||
            mount(NULL, merged, NULL, MS_PRIVATE, NULL))
                err = sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                 "mount overlay on %s (%s): %s", merged, opts,
                                 strerror(errno));
        free(opts);
        return err;
}

static char *join(const char *a, const char *b)
{
        size_t n = strlen(a) + strlen(b) + 2;
        char *s  = sbx_malloc(n);
        snprintf(s, n, "%s/%s", a, b);
        return s;
}

/* Mounts one overlay named @p name ("root", "sub0"…) at @p merged. */
static sbx_err_t layer_mount(const char *disk,
                             const char *name,
                             const char *merged,
                             const char *const *lowers,
                             size_t n_lowers,
                             char **ret_upper,
                             char *errstr,
                             size_t errstr_size)
{
        char up[64], wk[64];
        char *upper = join(disk, sbx_fmt(up, sizeof(up), "%s.upper", name));
        char *work  = join(disk, sbx_fmt(wk, sizeof(wk), "%s.work", name));
        sbx_err_t err;

        err = sbx_fs_mkdir(upper, 0755, 0, 0, errstr, errstr_size);
        if (!err)
                err = sbx_fs_mkdir(work, 0700, 0, 0, errstr, errstr_size);
        if (!err)
                err = sbx_fs_mkdir(merged, 0755, 0, 0, errstr, errstr_size);
        if (!err)
                err = mount_overlay(merged, lowers, n_lowers, upper, work,
                                    errstr, errstr_size);
        free(work);
        if (err)
                free(upper);
        else
                *ret_upper = upper;
        return err;
}

sbx_err_t sbx_rootfs_new(const char *dir,
                         const sbx_template_t *t,
                         int64_t disk_mb,
                         sbx_rootfs_t **ret_fs,
                         char *errstr,
                         size_t errstr_size)
{
        sbx_rootfs_t *r     = sbx_calloc(1, sizeof(*r));
        size_t nl           = sbx_template_layer_count(t);
        const char **lowers = sbx_calloc(nl, sizeof(char *));
        char *img = NULL, *disk = NULL;
        int made      = 0;
        sbx_err_t err = SBX_ERR_INVALID;

        r->dir = sbx_strdup(dir ? dir : "");
        if (!sbx_fs_path_ok(dir) || dir[0] != '/' || disk_mb < 16 ||
            disk_mb > (1 << 22)) {
                sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                           "rootfs: need an absolute path of "
                           "[A-Za-z0-9/_.+-] (got '%s') and 16 MiB <= disk "
                           "<= 4 TiB (got %lld MiB)",
                           r->dir, (long long)disk_mb);
                goto fail;
        }
        for (size_t i = 0; i < nl; i++) {
                lowers[i] = sbx_template_layer(t, i);
                if (!sbx_fs_path_ok(lowers[i])) {
                        sbx_seterr(errstr, errstr_size, SBX_ERR_INVALID,
                                   "layer path '%s' has characters overlayfs "
                                   "options cannot carry",
                                   lowers[i]);
                        goto fail;
                }
        }
        if (mkdir(dir, 0700)) {
                err =
                    sbx_seterr(errstr, errstr_size,
                               errno == EEXIST ? SBX_ERR_CONFLICT : SBX_ERR_IO,
                               "mkdir %s: %s", dir, strerror(errno));
                goto fail;
        }
        made = 1;
        img  = join(dir, "disk.img");
        disk = join(dir, "disk");
        if ((err = make_image(img, disk_mb, errstr, errstr_size)) ||
            (err = sbx_fs_mkdir(disk, 0700, 0, 0, errstr, errstr_size)) ||
            (err = mount_image(img, disk, errstr, errstr_size)))
                goto fail;
        r->root = join(dir, "rootfs");
        if ((err = layer_mount(disk, "root", r->root, lowers, nl, &r->upper,
                               errstr, errstr_size)))
                goto fail;
        r->n_subs     = sbx_template_sub_count(t);
        r->sub_merged = sbx_calloc(r->n_subs, sizeof(char *));
        r->sub_target = sbx_calloc(r->n_subs, sizeof(char *));
        r->sub_upper  = sbx_calloc(r->n_subs, sizeof(char *));
        for (size_t i = 0; i < r->n_subs; i++) {
                char name[32];
                size_t ns       = sbx_template_sub_layer_count(t, i);
                const char **sl = sbx_calloc(ns, sizeof(char *));
                sbx_fmt(name, sizeof(name), "sub%zu", i);
                r->sub_target[i] = sbx_strdup(sbx_template_sub_target(t, i));
                r->sub_merged[i] = join(dir, name);
                for (size_t j = 0; j < ns && !err; j++) {
                        sl[j] = sbx_template_sub_layer(t, i, j);
                        if (!sbx_fs_path_ok(sl[j]))
                                err = sbx_seterr(errstr, errstr_size,
                                                 SBX_ERR_INVALID,
                                                 "sub-layer path '%s' has "
                                                 "characters overlayfs "
                                                 "options cannot carry",
                                                 sl[j]);
                }
                if (!err)
                        err =
                            layer_mount(disk, name, r->sub_merged[i], sl, ns,
                                        &r->sub_upper[i], errstr, errstr_size);
                free(sl);
                if (err)
                        goto fail;
        }
        free(lowers);
        free(img);
        free(disk);
        *ret_fs = r;
        return SBX_OK;
fail:
        if (made)
                sbx_rootfs_wipe(dir, NULL, 0);
        free(lowers);
        free(img);
        free(disk);
        sbx_rootfs_destroy(r);
        return err;
}

void sbx_rootfs_destroy(sbx_rootfs_t *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_subs; i++) {
                if (r->sub_merged)
                        free(r->sub_merged[i]);
                if (r->sub_target)
                        free(r->sub_target[i]);
                if (r->sub_upper)
                        free(r->sub_upper[i]);
        }
        free(r->sub_merged);
        free(r->sub_target);
        free(r->sub_upper);
        free(r->dir);
        free(r->root);
        free(r->upper);
        free(r);
}

/* Decodes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
        char *w = s;
        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] &&
                    s[3]) {
                        *w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
                                      (s[3] - '0'));
                        s += 3;
                } else {
                        *w++ = *s;
                }
        }
        *w = '\0';
}

/* Mount points at or below @p dir, in mount order; returns the count. */
static size_t mounts_under(const char *dir, char **ret, size_t max)
{
        char *info = NULL, *line, *save = NULL;
        size_t n = 0, dl = strlen(dir);

        if (sbx_read_file("/proc/self/mountinfo", 16 << 20, &info, NULL, NULL,
                          0))
                return 0;
        for (line = strtok_r(info, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
                char *f[5], *sp = NULL, *tok = strtok_r(line, " ", &sp);
                int i;
                for (i = 0; i < 5 && tok; i++, tok = strtok_r(NULL, " ", &sp))
                        f[i] = tok;
                if (i < 5)
                        continue;
                unescape(f[4]);
                if (strncmp(f[4], dir, dl) ||
                    (f[4][dl] != '\0' && f[4][dl] != '/'))
                        continue;
                if (n < max)
                        ret[n++] = sbx_strdup(f[4]);
        }
        free(info);
        return n;
}

size_t sbx_rootfs_mounts_at(const char *path)
{
        char **m = sbx_calloc(ROOTFS_MAX_MOUNTS, sizeof(char *));
        size_t n = mounts_under(path, m, ROOTFS_MAX_MOUNTS), at = 0;
        for (size_t i = 0; i < n; i++) {
                at += !strcmp(m[i], path);
                free(m[i]);
        }
        free(m);
        return at;
}

int sbx_rootfs_is_mounted(const char *dir)
{
        char *m[1];
        size_t n = mounts_under(dir, m, 1);
        if (n)
                free(m[0]);
        return n > 0;
}

sbx_err_t sbx_rootfs_wipe(const char *dir, char *errstr, size_t errstr_size)
{
        char **m       = sbx_calloc(ROOTFS_MAX_MOUNTS, sizeof(char *));
        char last[512] = "";

        for (int round = 0; round < 8; round++) {
                size_t n = mounts_under(dir, m, ROOTFS_MAX_MOUNTS);
                if (!n)
                        break;
                /* Deepest (last mounted) first; lazily on the last rounds. */
                for (size_t i = n; i-- > 0;) {
                        if (umount2(m[i], round < 4 ? 0 : MNT_DETACH) &&
                            errno != EINVAL && errno != ENOENT)
                                sbx_fmt(last, sizeof(last), "umount %s: %s",
                                        m[i], strerror(errno));
                        free(m[i]);
                }
                if (round >= 2)
                        usleep(20000);
        }
        free(m);
        if (sbx_rootfs_is_mounted(dir))
                return sbx_seterr(errstr, errstr_size, SBX_ERR_IO,
                                  "%s: still mounted (%s)", dir, last);
        return sbx_fs_rmtree(dir, errstr, errstr_size);
}
