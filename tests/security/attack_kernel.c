/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Attacks of the containment suite on the host's kernel and its other
 * processes: reach the host over the network, mount, ptrace or signal a
 * host process, write /proc/sys and /sys, load a kernel module. Each
 * asserts that every step failed inside and, from the host, that its
 * listeners, mounts, process, kernel settings and modules are as they
 * were.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "containment.h"
#include "core/util.h"
#include "runtime/runtime.h"

/* ---- reach the host over the network ---- */

void test_network(void **state)
{
        static const char script[] =
            "print('interfaces', ' '.join(n for _, n in "
            "socket.if_nameindex()))\n"
            "def tcp(host, port):\n"
            "    fam = socket.AF_INET6 if ':' in host else socket.AF_INET\n"
            "    s = socket.socket(fam, socket.SOCK_STREAM)\n"
            "    s.settimeout(3)\n"
            "    try:\n"
            "        s.connect((host, port))\n"
            "    finally:\n"
            "        s.close()\n"
            "def abstract(name):\n"
            "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "    try:\n"
            "        s.connect(b'\\0' + name.encode())\n"
            "    finally:\n"
            "        s.close()\n"
            "attempt('abstract', lambda: abstract(sys.argv[1]))\n"
            "for a in sys.argv[2:]:\n"
            "    host, port = a.split()\n"
            "    attempt('tcp-' + host, lambda: tcp(host, int(port)))\n"
            "print('done')\n";
        box_t *b = *state;
        char targets[MAX_LISTENERS][80], abstract[64], label[128];
        struct sockaddr_in lo = {.sin_family = AF_INET,
                                 .sin_addr   = {htonl(INADDR_LOOPBACK)}};
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        struct ifaddrs *ifs, *i;
        int n = 0;
        result_t *r;

        box_start(b, "net", NULL);
        /* an abstract unix socket: it is per network namespace */
        sbx_fmt(abstract, sizeof(abstract), "sbx-sec-%ld", (long)getpid());
        memcpy(un.sun_path + 1, abstract, strlen(abstract));
        listen_on(b, (struct sockaddr *)&un,
                  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                              strlen(abstract)),
                  NULL, 0);
        listen_on(b, (struct sockaddr *)&lo, sizeof(lo), targets[n++],
                  sizeof(targets[0]));
        assert_int_equal(getifaddrs(&ifs), 0);
        for (i = ifs; i && n < MAX_LISTENERS - 2; i = i->ifa_next) {
                const struct sockaddr *a = i->ifa_addr;
                if (!a || (a->sa_family != AF_INET && a->sa_family != AF_INET6))
                        continue;
                if (a->sa_family == AF_INET6 &&
                    IN6_IS_ADDR_LINKLOCAL(
                        &((const struct sockaddr_in6 *)(const void *)a)
                             ->sin6_addr))
                        continue; /* needs a scope id: not by address alone */
                if (a->sa_family == AF_INET &&
                    ((const struct sockaddr_in *)(const void *)a)
                            ->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
                        continue; /* listened on already */
                listen_on(b, a,
                          a->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                  : sizeof(struct sockaddr_in6),
                          targets[n++], sizeof(targets[0]));
        }
        freeifaddrs(ifs);
        assert_true(n <= 6);
        r = py(b, PY_DEADLINE_MS, script, abstract, n > 0 ? targets[0] : NULL,
               n > 1 ? targets[1] : NULL, n > 2 ? targets[2] : NULL,
               n > 3 ? targets[3] : NULL, n > 4 ? targets[4] : NULL,
               n > 5 ? targets[5] : NULL, NULL);
        show("network", r);
        expect_completed(r);
        expect_failed(r, "abstract");
        for (int k = 0; k < n; k++) {
                *strchr(targets[k], ' ') = '\0';
                expect_failed(
                    r, sbx_fmt(label, sizeof(label), "tcp-%s", targets[k]));
        }
        /* and no listener of the host saw a connection */
        for (int k = 0; k < b->n_listeners; k++)
                assert_false(has_connection(b->listeners[k], 200));
        box_stop(b);
}

/* ---- mount ---- */

static char *host_mounts(void)
{
        return host_read("/proc/self/mountinfo");
}

/* Fails if a mount line in @p after and not in @p before names @p what. */
static void expect_no_new_mount(const char *before,
                                const char *after,
                                const char *what)
{
        for (const char *p = after; *p;) {
                const char *nl = strchrnul(p, '\n');
                char line[2048];
                sbx_fmt(line, sizeof(line), "%.*s", (int)(nl - p), p);
                if (!strstr(before, line) && strstr(line, what))
                        fail_msg("%s: new host mount: %s", S.runtime, line);
                p = *nl ? nl + 1 : nl;
        }
}

void test_mount(void **state)
{
        static const char script[] =
            "os.makedirs('/tmp/m', exist_ok=True)\n"
            "libc.mount.argtypes = [ctypes.c_char_p] * 3 + "
            "[ctypes.c_ulong, ctypes.c_void_p]\n"
            "def mount(src, dst, fs, flags):\n"
            "    if libc.mount(src, dst, fs, flags, None):\n"
            "        e = ctypes.get_errno()\n"
            "        raise OSError(e, os.strerror(e))\n"
            "attempt('mount-tmpfs', lambda: mount(b'none', b'/tmp/m', "
            "b'tmpfs', 0))\n"
            "attempt('mount-bind', lambda: mount(b'/', b'/tmp/m', None, "
            "4096))\n"
            "attempt('mount-proc', lambda: mount(b'proc', b'/tmp/m', "
            "b'proc', 0))\n"
            "attempt('remount-root-rw', lambda: mount(None, b'/usr', None, "
            "32 | 4096))\n" /* MS_REMOUNT|MS_BIND */
            "attempt('unshare-user-ns', lambda: sys_call(272, 0x10000000 | "
            "0x20000))\n"
            "attempt('unshare-mount-ns', lambda: sys_call(272, 0x20000))\n"
            "attempt('fsopen', lambda: sys_call(430, b'tmpfs', 0))\n"
            "attempt('open_tree', lambda: sys_call(428, -100, b'/', 1))\n"
            "r = os.system('mount -t tmpfs x /tmp/m 2>/dev/null')\n"
            "print('mount(8)-tmpfs', 'OK' if r == 0 else 'ERR %d' % r)\n"
            "r = os.system('mount --bind / /tmp/m 2>/dev/null')\n"
            "print('mount(8)-bind', 'OK' if r == 0 else 'ERR %d' % r)\n"
            "print('mounted', any(' /tmp/m ' in l for l in "
            "open('/proc/self/mounts')))\n"
            "print('done')\n";
        static const char *const labels[] = {
            "mount-tmpfs",     "mount-bind",      "mount-proc",
            "remount-root-rw", "unshare-user-ns", "unshare-mount-ns",
            "fsopen",          "open_tree",       "mount(8)-tmpfs",
            "mount(8)-bind"};
        box_t *b = *state;
        char dir[1024], *before, *after;
        result_t *r;

        box_start(b, "mount", NULL);
        before = host_mounts();
        r      = py(b, PY_DEADLINE_MS, script, NULL);
        after  = host_mounts();
        show("mount", r);
        expect_completed(r);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(labels); i++)
                expect_failed(r, labels[i]);
        assert_non_null(line_of(r, "mounted"));
        assert_int_equal(strncmp(line_of(r, "mounted"), "False", 5), 0);
        expect_no_new_mount(before, after, "tmpfs none");
        expect_no_new_mount(
            before, after,
            sbx_runtime_sandbox_dir(S.fx.rt, b->id, dir, sizeof(dir)));
        free(before);
        free(after);
        box_stop(b);
}

/* ---- ptrace a host process ---- */

static pid_t host_sleeper(box_t *b)
{
        pid_t pid     = fork();
        char comm[64] = "";
        assert_true(pid >= 0);
        if (pid == 0) {
                execl("/bin/sleep", "sleep", "600", (char *)NULL);
                _exit(127);
        }
        b->host_pid = pid;
        /* wait until it is sleep, not our fork */
        for (int i = 0; i < 200 && strcmp(comm, "sleep\n"); i++) {
                char p[64], *s = NULL;
                sleep_ms(5);
                if (!sbx_read_file(sbx_fmt(p, sizeof(p), "/proc/%d/comm", pid),
                                   64, &s, NULL, NULL, 0))
                        sbx_fmt(comm, sizeof(comm), "%s", s);
                free(s);
        }
        assert_string_equal(comm, "sleep\n");
        return pid;
}

void test_ptrace_host(void **state)
{
        static const char script[] =
            "pid = int(sys.argv[1])\n"
            "print('visible', os.path.exists('/proc/%d' % pid))\n"
            "print('processes', sum(p.isdigit() for p in "
            "os.listdir('/proc')))\n"
            "libc.ptrace.restype = ctypes.c_long\n"
            "def pt(req):\n"
            "    if libc.ptrace(ctypes.c_long(req), ctypes.c_long(pid), None, "
            "None) == -1:\n"
            "        e = ctypes.get_errno()\n"
            "        raise OSError(e, os.strerror(e))\n"
            "attempt('ptrace-attach', lambda: pt(16))\n"
            "attempt('ptrace-seize', lambda: pt(0x4206))\n"
            "attempt('kill-0', lambda: os.kill(pid, 0))\n"
            "attempt('kill-stop', lambda: os.kill(pid, signal.SIGSTOP))\n"
            "attempt('pidfd_open', lambda: sys_call(434, pid, 0))\n"
            "attempt('proc-mem', lambda: open('/proc/%d/mem' % pid, "
            "'rb').close())\n"
            "class IOV(ctypes.Structure):\n"
            "    _fields_ = [('base', ctypes.c_void_p), ('len', "
            "ctypes.c_size_t)]\n"
            "buf = ctypes.create_string_buffer(8)\n"
            "mine = IOV(ctypes.cast(buf, ctypes.c_void_p), 8)\n"
            "theirs = IOV(0x400000, 8)\n"
            "attempt('process_vm_readv', lambda: sys_call(310, pid, "
            "ctypes.byref(mine), 1, ctypes.byref(theirs), 1, 0))\n"
            "print('done')\n";
        static const char *const labels[] = {
            "ptrace-attach", "ptrace-seize", "kill-0",          "kill-stop",
            "pidfd_open",    "proc-mem",     "process_vm_readv"};
        box_t *b = *state;
        char pidtext[32], p[64], *status;
        pid_t pid;
        int st;
        result_t *r;

        box_start(b, "ptrace", NULL);
        pid = host_sleeper(b);
        r   = py(b, PY_DEADLINE_MS, script,
                 sbx_fmt(pidtext, sizeof(pidtext), "%d", (int)pid), NULL);
        show("ptrace", r);
        expect_completed(r);
        assert_non_null(line_of(r, "visible"));
        assert_int_equal(strncmp(line_of(r, "visible"), "False", 5), 0);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(labels); i++)
                expect_failed(r, labels[i]);
        /* the host process: alive, not stopped, not traced */
        assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
        status = host_read(sbx_fmt(p, sizeof(p), "/proc/%d/status", (int)pid));
        assert_non_null(strstr(status, "State:\tS (sleeping)"));
        assert_non_null(strstr(status, "TracerPid:\t0\n"));
        free(status);
        box_stop(b);
}

/* ---- write /proc/sys and /sys ---- */

/* The host's view of a file, "" if it has none. */
static char *host_value(const char *path)
{
        char *s = NULL;
        if (sbx_read_file(path, 1 << 16, &s, NULL, NULL, 0))
                return sbx_strdup("");
        return s;
}

void test_proc_sys(void **state)
{
        static const char script[] =
            "for label, path, value in (\n"
            "        ('hostname', '/proc/sys/kernel/hostname', 'sbx-evil'),\n"
            "        ('core_pattern', '/proc/sys/kernel/core_pattern', "
            "'|/tmp/evil'),\n"
            "        ('drop_caches', '/proc/sys/vm/drop_caches', '3'),\n"
            "        ('sysrq', '/proc/sysrq-trigger', 'h'),\n"
            "        ('thp', '/sys/kernel/mm/transparent_hugepage/enabled', "
            "'never'),\n"
            "        ('uevent_helper', '/sys/kernel/uevent_helper', "
            "'/tmp/evil'),\n"
            "        ('cgroup-memory', "
            "'/sys/fs/cgroup/memory/memory.limit_in_bytes', '-1'),\n"
            "        ('cgroup-pids', '/sys/fs/cgroup/pids/pids.max', "
            "'max')):\n"
            "    attempt(label, lambda: write(path, value))\n"
            "print('nodename', os.uname().nodename)\n"
            "print('done')\n";
        static const char *const watched[] = {
            "/proc/sys/kernel/hostname", "/proc/sys/kernel/core_pattern",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/sys/kernel/uevent_helper"};
        static const char *const labels[] = {
            "hostname", "core_pattern",  "drop_caches",   "sysrq",
            "thp",      "uevent_helper", "cgroup-memory", "cgroup-pids"};
        box_t *b = *state;
        char *before[SBX_ARRAY_SIZE(watched)], cgp[256], err[512];
        uint64_t mem = 0, pids = 0;
        result_t *r;

        box_start(b, "procsys", NULL);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(watched); i++)
                before[i] = host_value(watched[i]);
        r = py(b, PY_DEADLINE_MS, script, NULL);
        show("proc-sys", r);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(watched); i++) {
                char *now = host_value(watched[i]);
                assert_string_equal(now, before[i]);
                free(now);
                free(before[i]);
        }
        sbx_runtime_cgroup_path(b->id, cgp, sizeof(cgp));
        assert_int_equal(sbx_cgroup_read_u64(
                             sbx_runtime_cgroup(S.fx.rt), "memory", cgp,
                             "memory.limit_in_bytes", &mem, err, sizeof(err)),
                         SBX_OK);
        assert_int_equal(mem, (uint64_t)b->lim.memory_mb << 20);
        assert_int_equal(
            sbx_cgroup_read_u64(sbx_runtime_cgroup(S.fx.rt), "pids", cgp,
                                "pids.max", &pids, err, sizeof(err)),
            SBX_OK);
        assert_int_equal(pids, (uint64_t)b->lim.pids_max);
        expect_completed(r);
        for (size_t i = 0; i < SBX_ARRAY_SIZE(labels); i++)
                expect_failed(r, labels[i]);
        box_stop(b);
}

/* ---- load a kernel module ---- */

void test_kernel_module(void **state)
{
        static const char script[] =
            "import glob, shutil\n"
            "img = ctypes.create_string_buffer(b'\\x7fELF' + b'\\0' * 60)\n"
            "attempt('init_module', lambda: sys_call(175, img, 64, b''))\n"
            "kos = glob.glob('/usr/lib/modules/*/kernel/**/*.ko*', "
            "recursive=True)\n"
            "print('module-file', kos[0] if kos else None)\n"
            "fd = os.open(kos[0] if kos else '/usr/bin/true', os.O_RDONLY)\n"
            "attempt('finit_module', lambda: sys_call(313, fd, b'', 0))\n"
            "attempt('delete_module', lambda: sys_call(176, "
            "b'sbx_no_such_module', 0))\n"
            "attempt('kexec_load', lambda: sys_call(246, 0, 0, None, 0))\n"
            "mp = shutil.which('modprobe', path='/usr/sbin:/sbin:/usr/bin')\n"
            "print('modprobe', mp)\n"
            "if mp:\n"
            "    r = os.system(mp + ' dummy 2>/dev/null')\n"
            "    print('modprobe-run', 'OK' if r == 0 else 'ERR %d' % r)\n"
            "print('done')\n";
        box_t *b = *state;
        char *before, *after;
        result_t *r;

        box_start(b, "module", NULL);
        before = host_value("/proc/modules"); /* none: no module support */
        r      = py(b, PY_DEADLINE_MS, script, NULL);
        after  = host_value("/proc/modules");
        show("kernel-module", r);
        assert_string_equal(before, after);
        free(before);
        free(after);
        expect_completed(r);
        expect_failed(r, "init_module");
        expect_failed(r, "finit_module");
        expect_failed(r, "delete_module");
        expect_failed(r, "kexec_load");
        if (strncmp(line_of(r, "modprobe"), "None", 4))
                expect_failed(r, "modprobe-run");
        box_stop(b);
}
