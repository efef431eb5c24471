// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * confine.h: what infertop's two helpers that start someone else's code share (enter-target-root, the calibration
 * child's sandbox; launch-target, the launched command): a fresh session keyring, resource limits, and a seccomp
 * filter in two strengths. The includer defines die(fmt, ...) (one line on stderr, then exit) before including it.
 */
#ifndef INFERTOP_CONFINE_H
#define INFERTOP_CONFINE_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#if defined(__x86_64__)
#define CONFINE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CONFINE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "confine.h: x86_64 and arm64 only"
#endif

/*
 * Leaves whatever session keyring the process had (root's, inherited from infertop) for a new anonymous one of its
 * own: keys root added to its session are no longer reachable (possession goes with the session keyring, and a
 * key's owner permissions do not let another uid read it). Call it after the uid change, so the new keyring is
 * the new uid's. A kernel without keys (ENOSYS) has no keyring to reach.
 */
static inline void confine_fresh_session_keyring(void)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, (char *)NULL) < 0 && errno != ENOSYS)
		die("cannot join a fresh session keyring: %s", strerror(errno));
}

static inline void confine_limit(int resource, rlim_t soft, rlim_t hard, const char *what)
{
	struct rlimit l = {soft, hard};

	if (setrlimit(resource, &l))
		die("cannot limit %s: %s", what, strerror(errno));
}

/* Lowers a limit to at most `most` (soft and hard), never raises one. */
static inline void confine_cap_limit(int resource, rlim_t most, const char *what)
{
	struct rlimit l;

	if (getrlimit(resource, &l))
		die("cannot read the limit on %s: %s", what, strerror(errno));
	if (l.rlim_max == RLIM_INFINITY || l.rlim_max > most)
		l.rlim_max = most;
	if (l.rlim_cur == RLIM_INFINITY || l.rlim_cur > l.rlim_max)
		l.rlim_cur = l.rlim_max;
	confine_limit(resource, l.rlim_cur, l.rlim_max, what);
}

enum confine_strength {
	/* ioctl TIOCSTI and TIOCLINUX refused: for a user's own program, which keeps every other call */
	CONFINE_TERMINAL,
	/* also what the calibration child never needs and an attacker wants: see confine_seccomp */
	CONFINE_STRICT,
};

#define CONFINE_MAX_FILTER 96
#define CONFINE_NAMESPACES                                                                                      \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

struct confine_filter {
	struct sock_filter insn[CONFINE_MAX_FILTER];
	unsigned short n;
};

static inline void confine_add(struct confine_filter *f, struct sock_filter insn)
{
	if (f->n >= CONFINE_MAX_FILTER)
		die("the seccomp filter is longer than %d instructions", CONFINE_MAX_FILTER);
	f->insn[f->n++] = insn;
}

#define CONFINE_RET_ERRNO(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define CONFINE_RET_ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define CONFINE_LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
/* The low 32 bits of an argument (both architectures are little-endian). */
#define CONFINE_LOAD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))

/* The call `nr` fails with `e`; the accumulator holds the call number before and after. */
static inline void confine_refuse(struct confine_filter *f, long nr, int e)
{
	confine_add(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1));
	confine_add(f, (struct sock_filter)CONFINE_RET_ERRNO(e));
}

/*
 * A denylist (an allowlist the JVM and every libc of a target's root run under is more than these helpers can
 * keep true). Both strengths: a call of another architecture's ABI (x32 on x86_64) kills the process, and ioctl
 * TIOCSTI and TIOCLINUX (input pushed into a terminal, even one reached without a controlling terminal) fail
 * with EPERM. CONFINE_STRICT also refuses, with EPERM: ptrace, process_vm_writev, the keyring calls (keyctl,
 * add_key, request_key), unshare and setns, clone with any CLONE_NEW* flag (a user namespace is the door to
 * the others), bpf, perf_event_open, userfaultfd, io_uring_setup/enter/register; clone3, whose flags a filter
 * cannot read, fails with ENOSYS so that libc falls back to clone.
 *
 * Without CAP_SYS_ADMIN the kernel installs a filter only with no_new_privs set; the caller decides which.
 * Returns 0, or -1 with errno (EACCES: neither).
 */
static inline int confine_seccomp(enum confine_strength strength)
{
	struct confine_filter f = {.n = 0};
	struct sock_fprog program;

	confine_add(&f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
	confine_add(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CONFINE_AUDIT_ARCH, 1, 0));
	confine_add(&f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	confine_add(&f, (struct sock_filter)CONFINE_LOAD_NR);
#if defined(__x86_64__)
	confine_add(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1)); /* x32 */
	confine_add(&f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
	if (strength == CONFINE_STRICT) {
		static const long refused[] = {
			SYS_ptrace, SYS_process_vm_writev, SYS_keyctl, SYS_add_key, SYS_request_key, SYS_unshare,
			SYS_setns, SYS_bpf, SYS_perf_event_open,
#ifdef SYS_userfaultfd
			SYS_userfaultfd,
#endif
#ifdef SYS_io_uring_setup
			SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
#endif
		};
		size_t i;

		for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
			confine_refuse(&f, refused[i], EPERM);
#ifdef SYS_clone3
		confine_refuse(&f, SYS_clone3, ENOSYS);
#endif
		/* clone: the flags are the first argument on both architectures */
		confine_add(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
		confine_add(&f, (struct sock_filter)CONFINE_LOAD_ARG(0));
		confine_add(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CONFINE_NAMESPACES, 0, 1));
		confine_add(&f, (struct sock_filter)CONFINE_RET_ERRNO(EPERM));
		confine_add(&f, (struct sock_filter)CONFINE_RET_ALLOW);
	}
	/* ioctl: the request is the second argument; its low 32 bits are the number */
	confine_add(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 5));
	confine_add(&f, (struct sock_filter)CONFINE_LOAD_ARG(1));
	confine_add(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0));
	confine_add(&f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0));
	confine_add(&f, (struct sock_filter)CONFINE_RET_ALLOW);
	confine_add(&f, (struct sock_filter)CONFINE_RET_ERRNO(EPERM));
	confine_add(&f, (struct sock_filter)CONFINE_RET_ALLOW);
	program.len = f.n;
	program.filter = f.insn;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
}

/* Every descriptor above 2 closed. */
static inline void confine_close_from_3(void)
{
	int i;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3, ~0U, 0) == 0)
		return;
#endif
	for (i = 3; i < 1024; i++)
		close(i);
}

#endif
