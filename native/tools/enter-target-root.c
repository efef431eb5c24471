// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enter-target-root: starts infertop's calibration child, the one place a target's library code runs, inside
 * the traced process's own root (a container's image, a chroot; for most targets infertop's own root), sandboxed.
 * Run by infertop as root; everything after the fork below runs without privileges.
 *
 *   enter-target-root PID UID GID JAVA_HOME CLASSES -s START [-e NAME=VALUE]... [-c CGROUP_PROCS]...
 *       [-b FILE NAME]... -- JAVA_ARG...
 *
 * The target's root may belong to the target (root in a container owns its image) or to any user (a chroot), who
 * can rename and replace its names while this helper runs. So, running as root, the helper resolves no name in
 * that tree but one directory, once, without following a link, and works from there on open descriptors only.
 *
 * 0. Takes a pidfd of PID, opens /proc/PID as a directory and checks that the process there started at START
 *    (field 22 of /proc/PID/stat, which infertop read when it began): a pid reused since is refused. The target's
 *    mount namespace and root are opened through that directory, and only once the pidfd shows the process is
 *    still alive (so no other process had the pid meanwhile) are they used.
 * 1. While still in infertop's mount namespace, takes detached copies (open_tree) of what the child needs from
 *    the host: JAVA_HOME's bin/java, each entry of its lib/ and conf/ (symbolic links followed here, on the host,
 *    so a distribution JDK whose lib/jvm.cfg points into /etc works too), the CLASSES directory, and each -b FILE
 *    (a library the target maps, named by /proc/PID/map_files/...: the file itself, whatever directories lead to
 *    it; the child can read it only if the file's own mode lets it), to appear as libs/NAME. Each copy is made
 *    read-only, nosuid and nodev with all its submounts (mount_setattr) before it goes anywhere. A small tmpfs of
 *    the helper's own (fsopen, fsmount: detached, attached nowhere yet) gets the directories and mount points
 *    (mkdirat, openat O_EXCL|O_NOFOLLOW relative to its descriptor).
 * 2. Enters the target's mount namespace, stands in the target's root (fchdir on the descriptor from step 0) and
 *    makes a private copy of the namespace (unshare, which carries the working directory over into the copy), all
 *    mounts private: nothing done below is seen by the target or anyone else, and it all goes away with the child.
 * 3. Chroots there (chroot "."; checked by device and inode).
 * 4. Opens the first of /mnt, /opt, /srv, /media, /run, /var/tmp, /tmp that is a directory there (openat2 beneath
 *    the root, no symbolic or magic link on the way: a name swapped for a link is passed over) and attaches the
 *    tmpfs onto that descriptor (move_mount); then the copies onto their mount points in it, and the tmpfs with
 *    everything on it is made read-only (mount_setattr): nothing of the target's is ever remounted or written.
 *    /proc is opened the same way. Nothing is created in the target's files: a root without such a directory,
 *    or without /proc, is refused.
 * 5. New PID, network, IPC and UTS namespaces, then a fork: the child is PID 1 of its own PID namespace, so when it
 *    ends, or this helper is killed (the child has SIGKILL as its parent-death signal), the kernel kills every
 *    process it started: nothing outlives the calibration. It has no network (an empty network namespace), and a
 *    procfs of its own PID namespace (fsopen, attached onto the /proc descriptor; it reads its library as
 *    /proc/self/fd/0).
 * 6. The child drops every privilege: a new session with no controlling terminal, supplementary groups cleared,
 *    the capability bounding set emptied, UID and GID (never 0), a fresh session keyring of its own (root's is left
 *    behind), no_new_privs; limits on core dumps (none), file size, CPU time, address space, open files and threads
 *    (CHILD_NEW_THREADS more than the uid had when the helper started); not dumpable; a seccomp filter
 *    (confine.h, CONFINE_STRICT) refusing terminal input pushes, ptrace, the keyring calls, new namespaces, bpf,
 *    perf_event_open, userfaultfd and io_uring; every descriptor above 2 closed; then, from the tmpfs's directory
 *    (its working directory, set by descriptor), it executes the copied java with JAVA_ARGs, "@CLASSES@" standing
 *    for where the classes were attached and "@LIBS@" for the libs directory, and an environment of the -e pairs
 *    only (where they may name @LIBS@ too). What the unprivileged JVM looks up by those names it does as the
 *    child's user, whose code it runs anyway. Each -c CGROUP_PROCS (a cgroup's cgroup.procs file, infertop's to
 *    make with pids and memory limits) is joined by the helper first, so the child and all it starts are in it.
 * Needs Linux 5.12 (pidfd_open 5.3, openat2 5.6, mount_setattr 5.12; the new mount API 5.2); on an older kernel it
 * refuses with one line naming the call, and there is no fallback that works by path.
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
#include <linux/types.h>
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

/* The calls and flags of Linux 5.2-5.12, for C libraries and kernel headers older than the kernel. The system
 * call numbers are the same on x86_64 and arm64 (the generic table). */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#endif
#ifndef MOUNT_ATTR_NODEV
#define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef MOUNT_ATTR_NOEXEC
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef RESOLVE_NO_MAGICLINKS
#define RESOLVE_NO_MAGICLINKS 0x02
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
/* fsconfig commands (an enum in the headers, so under names of our own) */
#define CONFIG_SET_STRING 1
#define CONFIG_CMD_CREATE 6

/* struct open_how and struct mount_attr, as the kernel reads them (their first published sizes) */
struct how_to_open {
	__u64 flags;
	__u64 mode;
	__u64 resolve;
};

struct attributes {
	__u64 attr_set;
	__u64 attr_clr;
	__u64 propagation;
	__u64 userns_fd;
};

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

/* The directories of the helper's tmpfs, each open (O_PATH) while the helper lives: a tree goes into one of them. */
enum place { IN_BASE, IN_JDK, IN_JDK_BIN, IN_JDK_LIB, IN_LIBS, PLACES };

static const struct {
	enum place parent;
	const char *name;
	const char *shown; /* for messages: where it is in the tmpfs */
} places[PLACES] = {
	[IN_BASE] = {PLACES, ".infertop", ".infertop"},
	[IN_JDK] = {IN_BASE, "jdk", ".infertop/jdk"},
	[IN_JDK_BIN] = {IN_JDK, "bin", ".infertop/jdk/bin"},
	[IN_JDK_LIB] = {IN_JDK, "lib", ".infertop/jdk/lib"},
	[IN_LIBS] = {IN_BASE, "libs", ".infertop/libs"},
};

static int place_fds[PLACES];

struct tree {
	int fd;
	int directory;
	enum place parent;
	char name[NAME_MAX + 1];
};

static struct tree trees[MAX_TREES];
static int n_trees;

/* The kernel lacks a call: one line naming it (and the release that has it), never a way around it by path. */
static void die_call(const char *call, const char *since, const char *what)
{
	if (errno == ENOSYS)
		die("this kernel has no %s (Linux %s+): the sandbox needs it to %s by descriptor, and does nothing by "
		    "path instead", call, since, what);
	die("cannot %s (%s): %s", what, call, strerror(errno));
}

static int open_tree_(int dfd, const char *path, unsigned int flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int move_mount_(int from_dfd, const char *from, int to_dfd, const char *to, unsigned int flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static int fsopen_(const char *fs, unsigned int flags)
{
	return (int)syscall(SYS_fsopen, fs, flags);
}

static int fsconfig_(int fd, unsigned int cmd, const char *key, const char *value, int aux)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

static int fsmount_(int fd, unsigned int flags, unsigned int attributes)
{
	return (int)syscall(SYS_fsmount, fd, flags, attributes);
}

static int mount_setattr_(int dfd, const char *path, unsigned int flags, struct attributes *attr)
{
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, attr, sizeof(*attr));
}

static int openat2_(int dfd, const char *path, struct how_to_open *how)
{
	return (int)syscall(SYS_openat2, dfd, path, how, sizeof(*how));
}

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_alive(int pidfd)
{
	return !syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0);
}

/* The mount `fd` and everything mounted below it: read-only, no set-id, no devices (per mount, never a remount). */
static void make_read_only(int fd, const char *what)
{
	struct attributes attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};

	if (mount_setattr_(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr))
		die_call("mount_setattr", "5.12", what);
}

/* A detached, read-only copy of the host's `path` (links followed: infertop's own files) for parent/name. */
static void take_at(int dfd, const char *path, const char *shown, enum place parent, const char *name, int required)
{
	struct stat st;
	int fd;

	if (n_trees >= MAX_TREES)
		die("more than %d entries to attach", MAX_TREES);
	fd = open_tree_(dfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (fd < 0 && errno == ENOSYS)
		die_call("open_tree", "5.2", "copy a mount");
	if (fd < 0 && !required && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return;
	if (fd < 0)
		die("cannot copy the mount of %s (open_tree): %s", shown, strerror(errno));
	if (fstat(fd, &st))
		die("%s: %s", shown, strerror(errno));
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		if (required)
			die("%s is neither a file nor a directory", shown);
		close(fd);
		return;
	}
	if (strlen(name) > NAME_MAX)
		die("the name %s is too long", name);
	make_read_only(fd, "make a copy read-only");
	trees[n_trees].fd = fd;
	trees[n_trees].directory = S_ISDIR(st.st_mode);
	trees[n_trees].parent = parent;
	strcpy(trees[n_trees].name, name);
	n_trees++;
}

static void take(const char *path, enum place parent, const char *name, int required)
{
	take_at(AT_FDCWD, path, path, parent, name, required);
}

/* Every entry of the host's directory `dir` (JAVA_HOME/lib), each attached in `parent` under its own name. */
static void take_entries(const char *dir, enum place parent)
{
	char shown[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(d = fdopendir(fd)))
		die("%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		FMT(shown, "%s/%s", dir, e->d_name);
		take_at(dirfd(d), e->d_name, shown, parent, e->d_name, 0);
	}
	closedir(d);
}

/* The helper's tmpfs, detached: its directories made and opened, each tree's mount point made in its place. */
static int make_tmpfs(void)
{
	int fs, tmpfs, i;

	fs = fsopen_("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		die_call("fsopen", "5.2", "make a tmpfs");
	if (fsconfig_(fs, CONFIG_SET_STRING, "source", "infertop", 0) ||
	    fsconfig_(fs, CONFIG_SET_STRING, "mode", "0755", 0) || fsconfig_(fs, CONFIG_SET_STRING, "size", "1m", 0) ||
	    fsconfig_(fs, CONFIG_CMD_CREATE, NULL, NULL, 0))
		die_call("fsconfig", "5.2", "make a tmpfs");
	tmpfs = fsmount_(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (tmpfs < 0)
		die_call("fsmount", "5.2", "make a tmpfs");
	close(fs);
	for (i = 0; i < PLACES; i++) {
		int parent = places[i].parent == PLACES ? tmpfs : place_fds[places[i].parent];

		if (mkdirat(parent, places[i].name, 0755))
			die("mkdir %s in the helper's tmpfs: %s", places[i].name, strerror(errno));
		place_fds[i] = openat(parent, places[i].name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (place_fds[i] < 0)
			die("open %s in the helper's tmpfs: %s", places[i].name, strerror(errno));
	}
	for (i = 0; i < n_trees; i++) {
		int parent = place_fds[trees[i].parent], fd;

		if (trees[i].directory) {
			if (mkdirat(parent, trees[i].name, 0755))
				die("cannot make %s/%s: %s", places[trees[i].parent].shown, trees[i].name, strerror(errno));
			continue;
		}
		fd = openat(parent, trees[i].name, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			die("cannot make %s/%s: %s", places[trees[i].parent].shown, trees[i].name, strerror(errno));
		close(fd);
	}
	return tmpfs;
}

/* A directory beneath `root`, reached without a symbolic or magic link (nor "..", nor an absolute link). */
static int open_beneath(int root, const char *path)
{
	struct how_to_open how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = openat2_(root, path, &how);

	if (fd < 0 && errno == ENOSYS)
		die_call("openat2", "5.6", "open a directory of the target's root");
	return fd;
}

/* START as /proc/PID/stat says it, through the directory `proc` opened for the pidfd's process. */
static unsigned long long start_time(int proc, pid_t pid)
{
	char stat[4096], *p;
	unsigned long long start;
	ssize_t len;
	int fd = openat(proc, "stat", O_RDONLY | O_CLOEXEC), field;

	if (fd < 0)
		die("/proc/%d/stat: %s", (int)pid, strerror(errno));
	len = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (len <= 0)
		die("cannot read /proc/%d/stat", (int)pid);
	stat[len] = '\0';
	/* after the command name, whatever it holds: the last ')' */
	p = strrchr(stat, ')');
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1)
		die("cannot read the start time in /proc/%d/stat", (int)pid);
	return start;
}

static long parse_id(const char *text, const char *what)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (*text == '\0' || *end != '\0' || v <= 0 || v > 0x7fffffff)
		die("bad %s '%s' (a positive number, never 0)", what, text);
	return v;
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
	static const char *bases[] = {"mnt", "opt", "srv", "media", "run", "var/tmp", "tmp"};
	char path[PATH_MAX], base_dir[PATH_MAX], java[PATH_MAX], classes[PATH_MAX], libs[PATH_MAX];
	char *envp[MAX_ENV + 1];
	struct stat target_root, here;
	const char *base = NULL, *start_text = NULL;
	unsigned long long started;
	char **java_argv;
	int n_env = 0, i, first_arg, pidfd, proc, ns, root, tmpfs, proc_dir, fs, procfs, alive[2], status;
	int attach_errno = ENOENT;
	rlim_t threads;
	pid_t pid, child;
	uid_t uid;
	gid_t gid;

	if (argc < 8)
		die("usage: enter-target-root PID UID GID JAVA_HOME CLASSES -s START [-e NAME=VALUE]... [-c CGROUP_PROCS]... "
		    "[-b FILE NAME]... -- JAVA_ARG...");
	pid = (pid_t)parse_id(argv[1], "pid");
	uid = (uid_t)parse_id(argv[2], "uid");
	gid = (gid_t)parse_id(argv[3], "gid");
	threads = (rlim_t)(threads_of(uid) + CHILD_NEW_THREADS); /* counted in the host's /proc */
	/* 0. The process, held by a pidfd from here on. */
	pidfd = pidfd_open_(pid);
	if (pidfd < 0 && errno == ESRCH)
		die("no process %d", (int)pid);
	if (pidfd < 0)
		die_call("pidfd_open", "5.3", "hold the target process");
	FMT(path, "/proc/%d", (int)pid);
	proc = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		die("%s: %s", path, strerror(errno));
	/* 1. The host's parts, taken before leaving the host's namespace. */
	for (i = 6; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-e") && i + 1 < argc && strchr(argv[i + 1], '=')) {
			if (n_env >= MAX_ENV)
				die("more than %d environment entries", MAX_ENV);
			envp[n_env++] = argv[++i];
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			join_cgroup(argv[++i]);
		} else if (!strcmp(argv[i], "-b") && i + 2 < argc && is_plain_name(argv[i + 2])) {
			take(argv[i + 1], IN_LIBS, argv[i + 2], 1);
			i += 2;
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			start_text = argv[++i];
		} else {
			die("expected -s START, -e NAME=VALUE, -c CGROUP_PROCS, -b FILE NAME or --, got '%s'", argv[i]);
		}
	}
	envp[n_env] = NULL;
	if (i >= argc - 1)
		die("no java arguments after --");
	first_arg = i + 1;
	if (!start_text)
		die("no -s START: the start time of process %d as infertop saw it", (int)pid);
	if (!*start_text || strspn(start_text, "0123456789") != strlen(start_text) || strlen(start_text) > 19)
		die("bad start time '%s' (clock ticks after boot)", start_text);
	if (strtoull(start_text, NULL, 10) != (started = start_time(proc, pid)))
		die("process %d is not the one infertop was given (it started at %llu, not at %s): its pid was reused",
		    (int)pid, started, start_text);
	FMT(path, "%s/bin/java", argv[4]);
	take(path, IN_JDK_BIN, "java", 1);
	FMT(path, "%s/lib", argv[4]);
	take_entries(path, IN_JDK_LIB);
	FMT(path, "%s/conf", argv[4]);
	take(path, IN_JDK, "conf", 0);
	take(argv[5], IN_BASE, "classes", 1);
	tmpfs = make_tmpfs();

	/* The target's root and mount namespace, of the process the pidfd holds (checked once both are open). */
	root = openat(proc, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || fstat(root, &target_root))
		die("/proc/%d/root: %s", (int)pid, strerror(errno));
	ns = openat(proc, "ns/mnt", O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		die("/proc/%d/ns/mnt: %s", (int)pid, strerror(errno));
	if (!pidfd_alive(pidfd))
		die("process %d ended while the sandbox was being made", (int)pid);
	close(proc);
	close(pidfd);

	/* 2. A private copy of the target's mount namespace, standing in its root (unshare carries it over). */
	if (setns(ns, CLONE_NEWNS))
		die("cannot enter the mount namespace of process %d: %s", (int)pid, strerror(errno));
	close(ns);
	if (fchdir(root))
		die("cannot enter the root of process %d: %s", (int)pid, strerror(errno));
	close(root);
	if (unshare(CLONE_NEWNS))
		die("cannot copy the mount namespace: %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("cannot make the copied mounts private: %s", strerror(errno));

	/* 3. Its root. */
	if (chroot("."))
		die("cannot enter the root of process %d: %s", (int)pid, strerror(errno));
	root = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || fstat(root, &here) || here.st_dev != target_root.st_dev || here.st_ino != target_root.st_ino)
		die("the directory entered is not the root of process %d", (int)pid);

	/* 4. Our tmpfs on the first directory there, our parts on it; then all of it read-only. */
	for (i = 0; i < (int)(sizeof(bases) / sizeof(bases[0])); i++) {
		int dir = open_beneath(root, bases[i]);

		if (dir < 0) {
			attach_errno = errno;
			continue;
		}
		if (!move_mount_(tmpfs, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) {
			base = bases[i];
			close(dir);
			break;
		}
		attach_errno = errno;
		close(dir);
	}
	if (!base)
		die("the root of process %d has none of /mnt, /opt, /srv, /media, /run, /var/tmp, /tmp to mount on, as a "
		    "directory reached without a link (%s)", (int)pid, strerror(attach_errno));
	for (i = 0; i < n_trees; i++) {
		if (move_mount_(trees[i].fd, "", place_fds[trees[i].parent], trees[i].name, MOVE_MOUNT_F_EMPTY_PATH))
			die("cannot attach %s/%s: %s", places[trees[i].parent].shown, trees[i].name, strerror(errno));
		close(trees[i].fd);
	}
	make_read_only(tmpfs, "make the sandbox's tmpfs read-only");
	close(tmpfs);
	proc_dir = open_beneath(root, "proc");
	if (proc_dir < 0)
		die("the root of process %d has no /proc directory (reached without a link): %s", (int)pid,
		    strerror(errno));
	close(root);
	FMT(base_dir, "/%s/.infertop", base);
	FMT(libs, "%s/libs", base_dir);

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
	/* A procfs of the child's PID namespace (made here, in it), onto the /proc opened above. */
	fs = fsopen_("proc", FSOPEN_CLOEXEC);
	if (fs < 0 || fsconfig_(fs, CONFIG_CMD_CREATE, NULL, NULL, 0))
		die("cannot make a procfs: %s", strerror(errno));
	procfs = fsmount_(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (procfs < 0 || move_mount_(procfs, "", proc_dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH))
		die("cannot mount a procfs on /proc: %s", strerror(errno));
	/* The working directory, by descriptor: java is run from it, never by the name of the target's directory. */
	if (fchdir(place_fds[IN_BASE]))
		die("cannot enter the sandbox's directory: %s", strerror(errno));

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
	execve("jdk/bin/java", java_argv, envp);
	die("cannot run %s in the root of process %d: %s", java, (int)pid, strerror(errno));
	return 126;
}
