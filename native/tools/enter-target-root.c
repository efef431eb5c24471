// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enter-target-root: starts infertop's calibration child, the one place a target's library code runs, inside
 * the traced process's own root (a container's image, a chroot; for most targets infertop's own root), sandboxed.
 * Run by infertop as root; everything after the fork below runs without privileges.
 *
 *   enter-target-root PID UID GID JAVA_HOME CLASSES [-e NAME=VALUE]... [-c CGROUP_PROCS]... [-b FILE NAME]... --
 *       JAVA_ARG...
 *
 * 1. While still in infertop's mount namespace, takes detached copies (open_tree) of what the child needs from
 *    the host: JAVA_HOME's bin/java, each entry of its lib/ and conf/ (symbolic links followed here, on the host,
 *    so a distribution JDK whose lib/jvm.cfg points into /etc works too), the CLASSES directory, and each -b FILE
 *    (a library the target maps, named by /proc/PID/map_files/...: the file itself, whatever directories lead to
 *    it; the child can read it only if the file's own mode lets it), to appear as libs/NAME.
 * 2. Enters the target's mount namespace and makes a private copy of it (unshare), all mounts private: nothing
 *    done below is seen by the target or anyone else, and it all goes away with the child.
 * 3. Chroots into the target's root (the directory /proc/PID/root names; checked by device and inode).
 * 4. Mounts a small tmpfs on the first of /mnt, /opt, /srv, /media, /run, /var/tmp, /tmp that is a directory
 *    there, and attaches the copies under it (move_mount), read-only. Nothing is created in the target's files:
 *    a root without such a directory, or without /proc, is refused.
 * 5. New PID, network, IPC and UTS namespaces, then a fork: the child is PID 1 of its own PID namespace, so when it
 *    ends, or this helper is killed (the child has SIGKILL as its parent-death signal), the kernel kills every
 *    process it started: nothing outlives the calibration. It has no network (an empty network namespace), and a
 *    procfs of its own PID namespace on /proc (it reads its library as /proc/self/fd/0).
 * 6. The child drops every privilege: a new session with no controlling terminal, supplementary groups cleared,
 *    the capability bounding set emptied, UID and GID (never 0), a fresh session keyring of its own (root's is left
 *    behind), no_new_privs; limits on core dumps (none), file size, CPU time, address space, open files and threads
 *    (CHILD_NEW_THREADS more than the uid had when the helper started); not dumpable; a seccomp filter
 *    (confine.h, CONFINE_STRICT) refusing terminal input pushes, ptrace, the keyring calls, new namespaces, bpf,
 *    perf_event_open, userfaultfd and io_uring; every descriptor above 2 closed; then it executes the copied java
 *    with JAVA_ARGs, "@CLASSES@" standing for where the classes were attached and "@LIBS@" for the libs directory,
 *    and an environment of the -e pairs only (where they may name @LIBS@ too). Each -c CGROUP_PROCS (a cgroup's
 *    cgroup.procs file, infertop's to make with pids and memory limits) is joined by the helper first, so the
 *    child and all it starts are in it.
 * Errors: one line on stderr ("enter-target-root: ..."), exit status 126; otherwise the child's exit status (128 +
 * the signal that ended it).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif

#define MAX_TREES 512
#define MAX_ENV 16

/* The child's limits: a calibration takes about a second of CPU and a few tens of MB; the JVM reserves more. */
#define CHILD_CPU_SECONDS 60
#define CHILD_FILE_BYTES (1L << 20)
#define CHILD_ADDRESS_SPACE_BYTES (4L << 30)
/* The JVM opens its modules, jars and the libraries: a few dozen descriptors. */
#define CHILD_FILES 1024
/* Threads the child may start beyond those its uid has: the JVM's (~20) and ggml's pool. */
#define CHILD_NEW_THREADS 256

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("enter-target-root: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(126);
}

#include "confine.h"

/* snprintf into an array, refusing to cut: a path cut short would name another file. */
#define FMT(buf, ...)                                                              \
	do {                                                                       \
		int n_ = snprintf(buf, sizeof(buf), __VA_ARGS__);                   \
		if (n_ < 0 || (size_t)n_ >= sizeof(buf))                            \
			die("a path is longer than %zu bytes", sizeof(buf) - 1);    \
	} while (0)

struct tree {
	int fd;
	int directory;
	char where[PATH_MAX]; /* relative to the base directory */
};

static struct tree trees[MAX_TREES];
static int n_trees;

static int open_tree_(int dfd, const char *path, unsigned int flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int move_mount_(int from_dfd, const char *from, int to_dfd, const char *to, unsigned int flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

/* A detached copy of the host's `path` (links followed), to be attached at base/where. */
static void take(const char *path, const char *where, int required)
{
	struct stat st;
	int fd;

	if (n_trees >= MAX_TREES)
		die("more than %d entries to attach", MAX_TREES);
	if (stat(path, &st)) {
		if (required)
			die("%s: %s", path, strerror(errno));
		return;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return;
	fd = open_tree_(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (fd < 0)
		die("cannot copy the mount of %s (open_tree, Linux 5.2+): %s", path, strerror(errno));
	trees[n_trees].fd = fd;
	trees[n_trees].directory = S_ISDIR(st.st_mode);
	FMT(trees[n_trees].where, "%s", where);
	n_trees++;
}

/* Every entry of the host's directory `dir` (JAVA_HOME/lib), each attached at base/where/NAME. */
static void take_entries(const char *dir, const char *where)
{
	char path[PATH_MAX], to[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		die("%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		FMT(path, "%s/%s", dir, e->d_name);
		FMT(to, "%s/%s", where, e->d_name);
		take(path, to, 0);
	}
	closedir(d);
}

static void make_mount_point(const char *path, int directory)
{
	int fd;

	if (directory) {
		if (mkdir(path, 0755) && errno != EEXIST)
			die("mkdir %s: %s", path, strerror(errno));
		return;
	}
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot make %s: %s", path, strerror(errno));
	close(fd);
}

static long parse_id(const char *text, const char *what)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (*text == '\0' || *end != '\0' || v <= 0 || v > 0x7fffffff)
		die("bad %s '%s' (a positive number, never 0)", what, text);
	return v;
}

static int is_plain_directory(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * The limits a uid's thread count is measured against: RLIMIT_NPROC counts every thread of the uid, the target's
 * included, so the child gets room for this many more than there are when it starts.
 */
static long threads_of(uid_t uid)
{
	char path[64], line[256];
	struct dirent *e;
	long threads = 0;
	DIR *proc = opendir("/proc");

	if (!proc)
		die("/proc: %s", strerror(errno));
	while ((e = readdir(proc))) {
		long this_uid = -1, these = 0;
		FILE *status;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		FMT(path, "/proc/%s/status", e->d_name);
		status = fopen(path, "r");
		if (!status)
			continue; /* gone */
		while (fgets(line, sizeof(line), status)) {
			if (!strncmp(line, "Uid:", 4))
				this_uid = strtol(line + 4, NULL, 10);
			else if (!strncmp(line, "Threads:", 8))
				these = strtol(line + 8, NULL, 10);
		}
		fclose(status);
		if (this_uid == (long)uid)
			threads += these;
	}
	closedir(proc);
	return threads;
}

/* Moves this helper (and so the child it forks) into a cgroup: FILE is that cgroup's cgroup.procs. */
static void join_cgroup(const char *procs)
{
	int fd = open(procs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 || write(fd, "0\n", 2) != 2)
		die("cannot join the cgroup of %s: %s", procs, strerror(errno));
	close(fd);
}

/*
 * In the child, PID 1 of its namespace; `alive` is the read end of a pipe the helper holds open while it lives;
 * `threads` the room RLIMIT_NPROC leaves (see threads_of).
 */
static void drop_privileges(uid_t uid, gid_t gid, int alive, rlim_t threads)
{
	struct pollfd helper = {.fd = alive, .events = POLLIN};
	int last_cap = 63, cap;
	FILE *f;

	if (setsid() < 0)
		die("setsid: %s", strerror(errno));
	f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	if (f) {
		if (fscanf(f, "%d", &last_cap) != 1)
			last_cap = 63;
		fclose(f);
	}
	for (cap = 0; cap <= last_cap; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			die("cannot drop capability %d from the bounding set: %s", cap, strerror(errno));
	if (setgroups(0, NULL))
		die("setgroups: %s", strerror(errno));
	if (setresgid(gid, gid, gid))
		die("setresgid %d: %s", (int)gid, strerror(errno));
	if (setresuid(uid, uid, uid))
		die("setresuid %d: %s", (int)uid, strerror(errno));
	confine_fresh_session_keyring(); /* the new uid's: root's session keyring is left behind */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("no_new_privs: %s", strerror(errno));
	/* After the uid change, which clears it; then make sure the helper did not die in between (its end of the
	 * pipe closed: a hang-up on ours). getppid() cannot tell: it is 0 for PID 1 of a namespace. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		die("pdeathsig: %s", strerror(errno));
	if (poll(&helper, 1, 0) != 0)
		die("the helper is gone");
	close(alive);
	confine_limit(RLIMIT_CORE, 0, 0, "core dumps");
	confine_limit(RLIMIT_FSIZE, CHILD_FILE_BYTES, CHILD_FILE_BYTES, "file size");
	confine_limit(RLIMIT_CPU, CHILD_CPU_SECONDS, CHILD_CPU_SECONDS + 1, "CPU time");
	confine_limit(RLIMIT_AS, CHILD_ADDRESS_SPACE_BYTES, CHILD_ADDRESS_SPACE_BYTES, "address space");
	confine_limit(RLIMIT_NOFILE, CHILD_FILES, CHILD_FILES, "open files");
	confine_limit(RLIMIT_NPROC, threads, threads, "processes");
	/* Off until the execve; java is attached execute-only (infertop's copy, mode 0711), so the kernel keeps it
	 * off after it too: no other process of the uid can ptrace the child or read its /proc files. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (confine_seccomp(CONFINE_STRICT))
		die("cannot install the seccomp filter: %s", strerror(errno));
}

/* Replaces "@NAME@" placeholders in an argument or an environment entry. */
static char *substitute(const char *text, const char *classes, const char *libs)
{
	const char *at;
	char *out;

	if ((at = strstr(text, "@CLASSES@"))) {
		if (asprintf(&out, "%.*s%s%s", (int)(at - text), text, classes, at + strlen("@CLASSES@")) < 0)
			die("out of memory");
		return out;
	}
	if ((at = strstr(text, "@LIBS@"))) {
		if (asprintf(&out, "%.*s%s%s", (int)(at - text), text, libs, at + strlen("@LIBS@")) < 0)
			die("out of memory");
		return out;
	}
	return (char *)text;
}

static int is_plain_name(const char *name)
{
	return *name && strlen(name) <= 255 && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int main(int argc, char **argv)
{
	static const char *bases[] = {"/mnt", "/opt", "/srv", "/media", "/run", "/var/tmp", "/tmp"};
	char link[PATH_MAX], path[PATH_MAX], base_dir[PATH_MAX], java[PATH_MAX], classes[PATH_MAX], libs[PATH_MAX];
	char *envp[MAX_ENV + 1];
	struct stat target_root, here;
	const char *base = NULL;
	char **java_argv;
	int n_env = 0, i, first_arg, ns, alive[2], status;
	ssize_t len;
	rlim_t threads;
	pid_t pid, child;
	uid_t uid;
	gid_t gid;

	if (argc < 8)
		die("usage: enter-target-root PID UID GID JAVA_HOME CLASSES [-e NAME=VALUE]... [-c CGROUP_PROCS]... "
		    "[-b FILE NAME]... -- "
		    "JAVA_ARG...");
	pid = (pid_t)parse_id(argv[1], "pid");
	uid = (uid_t)parse_id(argv[2], "uid");
	gid = (gid_t)parse_id(argv[3], "gid");
	threads = (rlim_t)(threads_of(uid) + CHILD_NEW_THREADS); /* counted in the host's /proc */
	/* 1. The host's parts, taken before leaving the host's namespace. */
	for (i = 6; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-e") && i + 1 < argc && strchr(argv[i + 1], '=')) {
			if (n_env >= MAX_ENV)
				die("more than %d environment entries", MAX_ENV);
			envp[n_env++] = argv[++i];
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			join_cgroup(argv[++i]);
		} else if (!strcmp(argv[i], "-b") && i + 2 < argc && is_plain_name(argv[i + 2])) {
			FMT(path, "libs/%s", argv[i + 2]);
			take(argv[i + 1], path, 1);
			i += 2;
		} else {
			die("expected -e NAME=VALUE, -c CGROUP_PROCS, -b FILE NAME or --, got '%s'", argv[i]);
		}
	}
	envp[n_env] = NULL;
	if (i >= argc - 1)
		die("no java arguments after --");
	first_arg = i + 1;
	FMT(path, "%s/bin/java", argv[4]);
	take(path, "jdk/bin/java", 1);
	FMT(path, "%s/lib", argv[4]);
	take_entries(path, "jdk/lib");
	FMT(path, "%s/conf", argv[4]);
	take(path, "jdk/conf", 0);
	take(argv[5], "classes", 1);

	/* The target's root: where it is in its namespace, and what it is (device, inode) to check the chroot. */
	FMT(path, "/proc/%d/root", (int)pid);
	if (stat(path, &target_root))
		die("%s: %s", path, strerror(errno));
	len = readlink(path, link, sizeof(link) - 1);
	if (len <= 0 || link[0] != '/')
		die("cannot read the link %s", path);
	link[len] = '\0';

	/* 2. A private copy of the target's mount namespace. */
	FMT(path, "/proc/%d/ns/mnt", (int)pid);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		die("%s: %s", path, strerror(errno));
	if (setns(ns, CLONE_NEWNS))
		die("cannot enter the mount namespace of process %d: %s", (int)pid, strerror(errno));
	close(ns);
	if (unshare(CLONE_NEWNS))
		die("cannot copy the mount namespace: %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("cannot make the copied mounts private: %s", strerror(errno));

	/* 3. Its root. */
	if (chdir(link) || chroot(".") || chdir("/"))
		die("cannot enter the root %s of process %d: %s", link, (int)pid, strerror(errno));
	if (stat("/", &here) || here.st_dev != target_root.st_dev || here.st_ino != target_root.st_ino)
		die("%s is not the root of process %d in its namespace", link, (int)pid);

	/* 4. Our parts under a tmpfs of our own, read-only. */
	for (i = 0; i < (int)(sizeof(bases) / sizeof(bases[0])); i++) {
		if (is_plain_directory(bases[i]) &&
		    !mount("infertop", bases[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")) {
			base = bases[i];
			break;
		}
	}
	if (!base)
		die("the root of process %d has none of /mnt, /opt, /srv, /media, /run, /var/tmp, /tmp to mount on",
		    (int)pid);
	FMT(base_dir, "%s/.infertop", base);
	make_mount_point(base_dir, 1);
	FMT(path, "%s/jdk", base_dir);
	make_mount_point(path, 1);
	FMT(path, "%s/jdk/bin", base_dir);
	make_mount_point(path, 1);
	FMT(path, "%s/jdk/lib", base_dir);
	make_mount_point(path, 1);
	FMT(libs, "%s/libs", base_dir);
	make_mount_point(libs, 1);
	for (i = 0; i < n_trees; i++) {
		FMT(path, "%s/%s", base_dir, trees[i].where);
		make_mount_point(path, trees[i].directory);
		if (move_mount_(trees[i].fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH))
			die("cannot attach %s: %s", trees[i].where, strerror(errno));
		close(trees[i].fd);
	}
	if (mount(NULL, base, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755,size=1m"))
		die("cannot make %s read-only: %s", base, strerror(errno));
	if (!is_plain_directory("/proc"))
		die("the root of process %d has no /proc directory", (int)pid);

	/* 5. The child: PID 1 of new PID, network, IPC and UTS namespaces. */
	if (unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS))
		die("cannot make the child's namespaces: %s", strerror(errno));
	if (pipe2(alive, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child > 0) {
		close(alive[0]);
		while (waitpid(child, &status, 0) < 0)
			if (errno != EINTR)
				die("waitpid: %s", strerror(errno));
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	close(alive[1]);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		die("cannot mount a procfs on /proc: %s", strerror(errno));

	/* 6. Unprivileged from here on. */
	drop_privileges(uid, gid, alive[0], threads);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3, ~0U, 0))
#endif
		for (i = 3; i < 1024; i++)
			close(i);
	FMT(java, "%s/jdk/bin/java", base_dir);
	FMT(classes, "%s/classes", base_dir);
	java_argv = calloc((size_t)(argc - first_arg + 2), sizeof(char *));
	if (!java_argv)
		die("out of memory");
	java_argv[0] = java;
	for (i = first_arg; i < argc; i++)
		java_argv[i - first_arg + 1] = substitute(argv[i], classes, libs);
	for (i = 0; i < n_env; i++)
		envp[i] = substitute(envp[i], classes, libs);
	if (chdir(base_dir))
		die("chdir %s: %s", base_dir, strerror(errno));
	execve(java, java_argv, envp);
	die("cannot run %s in the root of process %d: %s", java, (int)pid, strerror(errno));
	return 126;
}
