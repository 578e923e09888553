/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Docker's default seccomp allow-list for x86_64, as a table. Entries that
 * need a capability in Docker's profile are absent (sandboxes have none),
 * 32-bit-only names are absent (the profile allows only the native ABI),
 * and io_uring (a steady source of kernel bugs) and modify_ldt are left
 * out by choice. Every name here resolves on x86_64 with libseccomp 2.5,
 * which the bundle unit test checks.
 */
#include "runtime/seccomp.h"

#include "core/util.h"

/* CLONE_NEWNS, _NEWCGROUP, _NEWUTS, _NEWIPC, _NEWUSER, _NEWPID, _NEWNET */
#define SECCOMP_CLONE_NS_FLAGS 0x7E020000

/* clang-format off */
static const char *const allowed[] = {
    "accept", "accept4", "access", "adjtimex", "alarm", "arch_prctl", "bind",
    "brk", "capget", "capset", "chdir", "chmod", "chown", "clock_adjtime",
    "clock_getres", "clock_gettime", "clock_nanosleep", "close", "close_range",
    "connect", "copy_file_range", "creat", "dup", "dup2", "dup3",
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old",
    "epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd",
    "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat",
    "faccessat2", "fadvise64", "fallocate", "fanotify_mark", "fchdir",
    "fchmod", "fchmodat", "fchown", "fchownat", "fcntl", "fdatasync",
    "fgetxattr", "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr",
    "fstat", "fstatfs", "fsync", "ftruncate", "futex", "futex_waitv",
    "futimesat", "get_robust_list", "get_thread_area", "getcpu", "getcwd",
    "getdents", "getdents64", "getegid", "geteuid", "getgid", "getgroups",
    "getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
    "getpriority", "getrandom", "getresgid", "getresuid", "getrlimit",
    "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
    "gettimeofday", "getuid", "getxattr", "inotify_add_watch", "inotify_init",
    "inotify_init1", "inotify_rm_watch", "io_cancel", "io_destroy",
    "io_getevents", "io_pgetevents", "io_setup", "io_submit", "ioctl",
    "ioprio_get", "ioprio_set", "kill", "landlock_add_rule",
    "landlock_create_ruleset", "landlock_restrict_self", "lchown", "lgetxattr",
    "link", "linkat", "listen", "listxattr", "llistxattr", "lremovexattr",
    "lseek", "lsetxattr", "lstat", "madvise", "membarrier", "memfd_create",
    "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod", "mknodat", "mlock",
    "mlock2", "mlockall", "mmap", "mprotect", "mq_getsetattr", "mq_notify",
    "mq_open", "mq_timedreceive", "mq_timedsend", "mq_unlink", "mremap",
    "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall",
    "munmap", "name_to_handle_at", "nanosleep", "newfstatat", "open", "openat",
    "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2",
    "pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "prctl",
    "pread64", "preadv", "preadv2", "prlimit64", "process_mrelease",
    "process_vm_readv", "process_vm_writev", "pselect6", "ptrace", "pwrite64",
    "pwritev", "pwritev2", "read", "readahead", "readlink", "readlinkat",
    "readv", "recvfrom", "recvmmsg", "recvmsg", "remap_file_pages",
    "removexattr", "rename", "renameat", "renameat2", "restart_syscall",
    "rmdir", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask",
    "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
    "rt_tgsigqueueinfo", "sched_get_priority_max", "sched_get_priority_min",
    "sched_getaffinity", "sched_getattr", "sched_getparam",
    "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
    "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield",
    "seccomp", "select", "semctl", "semget", "semop", "semtimedop", "sendfile",
    "sendmmsg", "sendmsg", "sendto", "set_robust_list", "set_thread_area",
    "set_tid_address", "setfsgid", "setfsuid", "setgid", "setgroups",
    "setitimer", "setpgid", "setpriority", "setregid", "setresgid",
    "setresuid", "setreuid", "setrlimit", "setsid", "setsockopt", "setuid",
    "setxattr", "shmat", "shmctl", "shmdt", "shmget", "shutdown",
    "sigaltstack", "signalfd", "signalfd4", "socket", "socketpair", "splice",
    "stat", "statfs", "statx", "symlink", "symlinkat", "sync",
    "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time",
    "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
    "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime",
    "times", "tkill", "truncate", "umask", "uname", "unlink", "unlinkat",
    "utime", "utimensat", "utimes", "vfork", "vmsplice", "wait4", "waitid",
    "write", "writev",
};
/* clang-format on */

/* personality(2) values Docker allows: Linux, UNAME26, ADDR_NO_RANDOMIZE,
 * both, and the query. */
static const json_int_t personalities[] = {0x0, 0x8, 0x20000, 0x20008,
                                           0xffffffff};

const char *const *sbx_seccomp_allowed(size_t *ret_count)
{
        *ret_count = SBX_ARRAY_SIZE(allowed);
        return allowed;
}

static json_t *rule(const char *name, const char *action)
{
        return json_pack("{s:[s],s:s}", "names", name, "action", action);
}

json_t *sbx_seccomp_profile_new(void)
{
        json_t *names = json_array(), *rules = json_array(), *r;

        for (size_t i = 0; i < SBX_ARRAY_SIZE(allowed); i++)
                json_array_append_new(names, json_string(allowed[i]));
        json_array_append_new(rules, json_pack("{s:o,s:s}", "names", names,
                                               "action", "SCMP_ACT_ALLOW"));
        for (size_t i = 0; i < SBX_ARRAY_SIZE(personalities); i++) {
                r = rule("personality", "SCMP_ACT_ALLOW");
                json_object_set_new(
                    r, "args",
                    json_pack("[{s:i,s:I,s:s}]", "index", 0, "value",
                              personalities[i], "op", "SCMP_CMP_EQ"));
                json_array_append_new(rules, r);
        }
        r = rule("clone", "SCMP_ACT_ALLOW");
        json_object_set_new(
            r, "args",
            json_pack("[{s:i,s:I,s:I,s:s}]", "index", 0, "value",
                      (json_int_t)SECCOMP_CLONE_NS_FLAGS, "valueTwo",
                      (json_int_t)0, "op", "SCMP_CMP_MASKED_EQ"));
        json_array_append_new(rules, r);
        r = rule("clone3", "SCMP_ACT_ERRNO");
        json_object_set_new(r, "errnoRet", json_integer(38)); /* ENOSYS */
        json_array_append_new(rules, r);

        r = json_pack("{s:s,s:i,s:[s],s:o}", "defaultAction", "SCMP_ACT_ERRNO",
                      "defaultErrnoRet", 1, "architectures", "SCMP_ARCH_X86_64",
                      "syscalls", rules);
        sbx_assert(r);
        return r;
}
