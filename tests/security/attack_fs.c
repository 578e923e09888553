/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Attacks of the containment suite on the host's files: read a secret
 * planted on the host, write outside the sandbox, fill /tmp, /dev/shm and
 * the root, escape through symlinks in /workspace and the agent's socket
 * directory. The root of a sandbox is writable by design, so what a write
 * did land in must be the sandbox's own upper dir, never the host's tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/client.h"
#include "containment.h"
#include "core/util.h"
#include "runtime/fsutil.h"
#include "runtime/runtime.h"

/* ---- planted secrets and the overlay ---- */

/* A random hex marker: "SBX-SECRET-<32 hex>". */
static void make_marker(char *buf, size_t size)
{
        uint8_t r[16];
        size_t off;
        assert_int_equal(getrandom(r, sizeof(r), 0), sizeof(r));
        off = (size_t)snprintf(buf, size, "SBX-SECRET-");
        for (size_t i = 0; i < sizeof(r) && off + 2 < size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%02x", r[i]);
}

/* Plants a fake private key holding @p marker at @p dir/id_rsa (0600). */
static void plant_secret(box_t *b,
                         const char *dir,
                         const char *marker,
                         char *ret_path,
                         size_t size)
{
        char err[512], key[256];
        if (sbx_fs_mkdir(dir, 0700, 0, 0, err, sizeof(err)))
                fail_msg("%s", err);
        box_remember(b, dir);
        sbx_fmt(key, sizeof(key),
                "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n"
                "-----END OPENSSH PRIVATE KEY-----\n",
                marker);
        sbx_fmt(ret_path, size, "%s/id_rsa", dir);
        if (sbx_fs_write(ret_path, key, strlen(key), 0600, err, sizeof(err)))
                fail_msg("%s", err);
}

/* Where a path of the sandbox lands on the host if written: the upper
 * dir of the overlay that holds it. */
static char *upper_of(const box_t *b, const char *path, char *buf, size_t size)
{
        char dir[1024];
        sbx_runtime_sandbox_dir(S.fx.rt, b->id, dir, sizeof(dir));
        for (size_t i = 0; i < sbx_template_sub_count(S.fx.host); i++) {
                const char *t = sbx_template_sub_target(S.fx.host, i);
                size_t n      = strlen(t);
                if (!strncmp(path, t, n) && path[n] == '/')
                        return sbx_fmt(buf, size, "%s/disk/sub%zu.upper%s", dir,
                                       i, path + n);
        }
        return sbx_fmt(buf, size, "%s/disk/root.upper%s", dir, path);
}

/* ---- read a secret planted on the host ---- */

void test_read_host_secret(void **state)
{
        static const char script[] =
            "marker_paths = sys.argv[1:3]\n"
            "for i, p in enumerate(marker_paths):\n"
            "    attempt('read%d' % i, lambda: read(p))\n"
            "    attempt('proc1root%d' % i, lambda: read('/proc/1/root' + p))\n"
            "    attempt('procselfroot%d' % i,\n"
            "            lambda: read('/proc/self/root' + p))\n"
            "attempt('dotdot', lambda: read(sys.argv[3]))\n"
            "class FH(ctypes.Structure):\n"
            "    _fields_ = [('bytes', ctypes.c_uint), ('type', "
            "ctypes.c_int),\n"
            "                ('f', ctypes.c_ubyte * 8)]\n"
            "fh = FH(8, 1)\n"
            "fh.f[0] = 2\n" /* FILEID_INO32_GEN of inode 2: a root dir */
            "mfd = os.open('/', os.O_RDONLY)\n"
            "attempt('open_by_handle_at',\n"
            "        lambda: sys_call(304, mfd, ctypes.byref(fh), 0))\n"
            "found = []\n"
            "for top, dirs, files in os.walk('/'):\n"
            "    if top == '/':\n"
            "        dirs[:] = [d for d in dirs\n"
            "                   if d not in ('proc', 'sys', 'dev', 'usr')]\n"
            "    found += [os.path.join(top, f) for f in files\n"
            "              if f == 'id_rsa']\n"
            "print('found', found)\n"
            "for f in found:\n"
            "    attempt('found-read', lambda: read(f))\n"
            "print('done')\n";
        box_t *b = *state;
        char marker[64], dir[600], home_key[700], state_key[700], rel[700];
        result_t *r;

        box_start(b, "secret", NULL);
        make_marker(marker, sizeof(marker));
        sbx_fmt(dir, sizeof(dir), "/root/.ssh-sbx-test-%ld", (long)getpid());
        plant_secret(b, dir, marker, home_key, sizeof(home_key));
        sbx_fmt(dir, sizeof(dir), "%s/secret", S.fx.root);
        plant_secret(b, dir, marker, state_key, sizeof(state_key));
        /* from the workspace, up to the state root as the host lays it */
        sbx_fmt(rel, sizeof(rel), "/workspace/../../secret/id_rsa");
        r = py(b, PY_DEADLINE_MS, script, home_key, state_key, rel, NULL);
        show("read-secret", r);
        expect_completed(r);
        assert_null(strstr(out_of(r), marker));
        assert_null(strstr(err_of(r), marker));
        expect_failed(r, "read0");
        expect_failed(r, "read1");
        expect_failed(r, "proc1root0");
        expect_failed(r, "proc1root1");
        expect_failed(r, "procselfroot0");
        expect_failed(r, "procselfroot1");
        expect_failed(r, "dotdot");
        expect_failed(r, "open_by_handle_at");
        assert_true(rtfx_file_has(home_key, marker)); /* untouched */
        box_stop(b);
}

/* ---- write outside the sandbox ---- */

void test_write_outside(void **state)
{
        static const char script[] =
            "n, hostdir = sys.argv[1], sys.argv[2]\n"
            "for label, d in (('usr', '/usr'), ('etc', '/etc'), ('root', "
            "'/'),\n"
            "                 ('bin', '/bin'), ('lib', '/usr/lib'),\n"
            "                 ('agentdir', '/.sbx'), ('hostdir', hostdir)):\n"
            "    attempt('write-' + label,\n"
            "            lambda: write(os.path.join(d, n), 'owned'))\n"
            "attempt('agent-binary', lambda: write('/.sbx/sbx-agent', 'x', "
            "'a'))\n"
            "print('done')\n";
        /* sandbox path written -> host path that must not appear */
        static const char *const places[][2] = {
            {"usr", "/usr"},     {"etc", "/etc"},     {"root", ""},
            {"bin", "/usr/bin"}, {"lib", "/usr/lib"}, {"agentdir", "/.sbx"}};
        box_t *b = *state;
        char name[64], hostdir[600], p[1200], label[64];
        char *agent_before, *agent_after;
        result_t *r;

        box_start(b, "write", NULL);
        sbx_fmt(name, sizeof(name), "sbx-evil-%ld", (long)getpid());
        sbx_fmt(hostdir, sizeof(hostdir), "%s/hostdir", S.fx.root);
        assert_int_equal(mkdir(hostdir, 0755), 0);
        box_remember(b, hostdir);
        agent_before = host_read(S.agent);
        r            = py(b, PY_DEADLINE_MS, script, name, hostdir, NULL);
        show("write-outside", r);
        expect_completed(r);
        expect_failed(r, "write-hostdir");
        expect_failed(r, "agent-binary");
        for (size_t i = 0; i < SBX_ARRAY_SIZE(places); i++) {
                const char *v;
                expect_absent(
                    sbx_fmt(p, sizeof(p), "%s/%s", places[i][1], name));
                /* The root is writable by design: what a write did
                 * land in is the sandbox's own upper dir. */
                v = line_of(
                    r, sbx_fmt(label, sizeof(label), "write-%s", places[i][0]));
                assert_non_null(v);
                if (!strncmp(v, "OK", 2)) {
                        char in[256];
                        sbx_fmt(in, sizeof(in), "%s/%s", places[i][1], name);
                        assert_true(rtfx_file_has(upper_of(b, in, p, sizeof(p)),
                                                  "owned"));
                }
        }
        expect_absent(sbx_fmt(p, sizeof(p), "%s/%s", hostdir, name));
        agent_after = host_read(S.agent);
        assert_string_equal(agent_before, agent_after);
        free(agent_before);
        free(agent_after);
        box_stop(b);
}

/* ---- fill /tmp, /dev/shm and the root's upper dir ---- */

static uint64_t host_free_bytes(const char *path)
{
        struct statvfs v;
        assert_int_equal(statvfs(path, &v), 0);
        return (uint64_t)v.f_bavail * v.f_frsize;
}

/* MiB the fill of @p path got to inside, asserting it stopped at ENOSPC. */
static long filled_mb(const result_t *r, const char *path)
{
        const char *v = line_of(r, path);
        char ename[32];
        long mb = -1;
        if (!v || sscanf(v, "ERR %31s %ld", ename, &mb) != 2)
                fail_msg("%s: fill of %s did not stop with an error: %s",
                         S.runtime, path, v ? v : "(no line)");
        if (strcmp(ename, "ENOSPC") && strcmp(ename, "EDQUOT"))
                fail_msg("%s: fill of %s ended with %s", S.runtime, path,
                         ename);
        return mb;
}

void test_disk_fill(void **state)
{
        static const char script[] =
            "def fill(path):\n"
            "    n, chunk = 0, b'\\xa5' * (1 << 20)\n"
            "    try:\n"
            "        with open(path, 'wb') as f:\n"
            "            while n < (1 << 30):\n"
            "                f.write(chunk)\n"
            "                f.flush()\n"
            "                n += len(chunk)\n"
            "            os.fsync(f.fileno())\n"
            "        print(path, 'OK', n >> 20, flush=True)\n"
            "    except OSError as e:\n"
            "        print(path, 'ERR', ename(e.errno), n >> 20, flush=True)\n"
            "for p in sys.argv[1:]:\n"
            "    fill(p)\n"
            "print('done')\n";
        static const char *const cleanup[] = {
            "/bin/sh", "-c",
            "rm /tmp/fill /dev/shm/fill /fill && echo ok > /small && cat "
            "/small",
            NULL};
        box_t *b = *state;
        uint64_t before, after;
        char p[1200];
        struct stat st;
        long tmp, shm, root;
        result_t *r;

        box_start(b, "disk", NULL);
        before = host_free_bytes(S.fx.root);
        r = py(b, PY_DEADLINE_MS, script, "/tmp/fill", "/dev/shm/fill", "/fill",
               NULL);
        after = host_free_bytes(S.fx.root);
        show("disk-fill", r);
        printf("  %s disk-fill: host free space %+lld KiB\n", S.runtime,
               ((long long)after - (long long)before) / 1024);
        expect_completed(r);
        tmp  = filled_mb(r, "/tmp/fill");
        shm  = filled_mb(r, "/dev/shm/fill");
        root = filled_mb(r, "/fill");
        assert_true(tmp <= b->lim.tmp_mb && tmp >= b->lim.tmp_mb / 2);
        assert_true(shm <= b->lim.tmp_mb && shm >= b->lim.tmp_mb / 2);
        assert_true(root <= b->lim.disk_mb && root >= b->lim.disk_mb / 2);
        /* the host lost at most the sandbox's disk, not its free space */
        assert_true(before < after ||
                    before - after <= (uint64_t)(b->lim.disk_mb + 16) << 20);
        assert_int_equal(stat(upper_of(b, "/fill", p, sizeof(p)), &st), 0);
        assert_true(st.st_size <= b->lim.disk_mb << 20);
        r = exec_in(b, cleanup, 30000);
        assert_int_equal(r->exit.exit_code, 0);
        assert_string_equal(out_of(r), "ok\n");
        box_stop(b);
}

/* ---- escape through symlinks in /workspace ---- */

/*
 * The agent's socket directory is the other host directory a sandbox
 * writes. Its agent.sock replaced by a link to a host socket, the host's
 * next connection must not follow the link there.
 */
static void expect_socket_link_refused(box_t *b)
{
        static const char script[] =
            "attempt('unlink', lambda: os.unlink('/run/sbx/agent.sock'))\n"
            "attempt('link', lambda: os.symlink(sys.argv[1], "
            "'/run/sbx/agent.sock'))\n"
            "print('done')\n";
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        sbx_agent_conn_t *c;
        char err[512];
        result_t *r;

        sbx_fmt(un.sun_path, sizeof(un.sun_path), "%s/decoy.sock", S.fx.root);
        listen_on(b, (struct sockaddr *)&un, sizeof(un), NULL, 0);
        r = py(b, PY_DEADLINE_MS, script, un.sun_path, NULL);
        show("socket-link", r);
        expect_completed(r);
        c = sbx_agent_connect(b->sock, 500, err, sizeof(err));
        printf("  %s socket-link: host connect: %s\n", S.runtime,
               c ? "connected" : err);
        /* the decoy saw nothing; where no link could be made (runsc), the
         * host still reaches the agent itself */
        assert_false(has_connection(b->listeners[b->n_listeners - 1], 200));
        if (!strncmp(line_of(r, "link"), "OK", 2))
                assert_null(c);
        else {
                assert_non_null(c);
                assert_int_equal(sbx_agent_ping(c, err, sizeof(err)), SBX_OK);
        }
        sbx_agent_close(c);
}

void test_workspace_symlink(void **state)
{
        static const char script[] =
            "n, secret, ws = sys.argv[1:4]\n"
            "os.symlink('/etc', '/workspace/evil')\n"
            "attempt('write-via-etc-link', lambda: "
            "write('/workspace/evil/' + n, 'owned'))\n"
            "os.symlink('/', '/workspace/rootlink')\n"
            "attempt('write-via-root-link', lambda: "
            "write('/workspace/rootlink/' + n, 'owned'))\n"
            "os.symlink(secret, '/workspace/hostsecret')\n"
            "attempt('read-via-host-link', lambda: "
            "read('/workspace/hostsecret'))\n"
            "os.symlink(ws + '/../../../../../../..' + secret, "
            "'/workspace/dotdot')\n"
            "attempt('read-via-dotdot-link', lambda: "
            "read('/workspace/dotdot'))\n"
            "print('done')\n";
        static const char again[] =
            "n, secret = sys.argv[1:3]\n"
            "attempt('read-old-write', lambda: read('/workspace/evil/' + n))\n"
            "attempt('read-via-host-link', lambda: "
            "read('/workspace/hostsecret'))\n"
            "print('done')\n";
        box_t *b = *state;
        char name[64], marker[64], dir[600], secret[700], p[1200], link[64];
        struct stat st;
        ssize_t n;
        result_t *r;

        box_start(b, "symlink", NULL);
        make_marker(marker, sizeof(marker));
        sbx_fmt(dir, sizeof(dir), "/root/.ssh-sbx-test-%ld", (long)getpid());
        plant_secret(b, dir, marker, secret, sizeof(secret));
        sbx_fmt(name, sizeof(name), "sbx-evil-%ld", (long)getpid());
        r = py(b, PY_DEADLINE_MS, script, name, secret, b->ws, NULL);
        show("workspace-symlink", r);
        expect_completed(r);
        assert_null(strstr(out_of(r), marker));
        expect_failed(r, "read-via-host-link");
        expect_failed(r, "read-via-dotdot-link");
        /* writes through the links stayed in the sandbox's view */
        expect_absent(sbx_fmt(p, sizeof(p), "/etc/%s", name));
        expect_absent(sbx_fmt(p, sizeof(p), "/%s", name));
        assert_true(rtfx_file_has(
            upper_of(b, sbx_fmt(link, sizeof(link), "/etc/%s", name), p,
                     sizeof(p)),
            "owned"));
        /* on the host the workspace holds the links themselves */
        sbx_fmt(p, sizeof(p), "%s/evil", b->ws);
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        n = readlink(p, link, sizeof(link) - 1);
        assert_int_equal(n, 4);
        link[n] = '\0';
        assert_string_equal(link, "/etc");

        /* the host handles the workspace again: a new sandbox on it */
        box_stop(b);
        box_start(b, "symlink2", NULL);
        r = py(b, PY_DEADLINE_MS, again, name, secret, NULL);
        show("workspace-symlink-again", r);
        expect_completed(r);
        assert_null(strstr(out_of(r), marker));
        expect_failed(r, "read-old-write");
        expect_failed(r, "read-via-host-link");
        expect_absent(sbx_fmt(p, sizeof(p), "/etc/%s", name));
        assert_true(rtfx_file_has(secret, marker));
        expect_socket_link_refused(b);
        box_stop(b);
}
