// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enter-target-root: starts infertop's calibration child inside a traced process's own root (a container's
 * image, a chroot), so that the target's libraries are loaded by the target's own dynamic loader and libc,
 * never the host's. Run by infertop as root; everything after the chroot runs without privileges.
 *
 *   enter-target-root PID UID GID JAVA_HOME CLASSES [-e NAME=VALUE]... -- JAVA_ARG... 
 *
 * 1. While still in infertop's mount namespace, takes detached copies (open_tree) of what the child needs from
 *    the host: JAVA_HOME's bin/java, each entry of its lib/ and conf/ (symbolic links followed here, on the host,
 *    so a distribution JDK whose lib/jvm.cfg points into /etc works too) and the CLASSES directory.
 * 2. Enters the target's mount namespace and makes a private copy of it (unshare), all mounts private: nothing
 *    done below is seen by the target or anyone else, and it all goes away with the child.
 * 3. Chroots into the target's root (the directory /proc/PID/root names; checked by device and inode).
 * 4. Mounts a small tmpfs on the first of /tmp, /run, /mnt, /var/tmp, /opt that is a directory there, and
 *    attaches the copies under it (move_mount); mounts a procfs over /proc (the child reads its library as
 *    /proc/self/fd/0, and a container's own procfs has no entry for a process outside its PID namespace).
 *    Nothing is created in the target's files: a root without such a directory, or without /proc, is refused.
 * 5. Drops every privilege: a new session with no controlling terminal, supplementary groups cleared, the
 *    capability bounding set emptied, UID and GID (never 0), no_new_privs, SIGKILL when infertop dies, no core
 *    dump, every descriptor above 2 closed; then executes the copied java with JAVA_ARGs, "@CLASSES@" standing
 *    for where the classes were attached, and an environment of the -e pairs only.
 * Errors: one line on stderr ("enter-target-root: ..."), exit status 126.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/mount.h>
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

static void drop_privileges(uid_t uid, gid_t gid, pid_t parent)
{
	struct rlimit no_core = {0, 0};
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
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("no_new_privs: %s", strerror(errno));
	/* After the uid change, which clears it; then make sure the parent did not die in between. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		die("pdeathsig: %s", strerror(errno));
	if (getppid() != parent)
		die("infertop is gone");
	setrlimit(RLIMIT_CORE, &no_core);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int main(int argc, char **argv)
{
	static const char *bases[] = {"/tmp", "/run", "/mnt", "/var/tmp", "/opt"};
	char link[PATH_MAX], path[PATH_MAX], base_dir[PATH_MAX], java[PATH_MAX], classes[PATH_MAX];
	char *envp[MAX_ENV + 1];
	struct stat target_root, here;
	const char *base = NULL;
	char **java_argv;
	int n_env = 0, i, first_arg, ns;
	ssize_t len;
	pid_t pid, parent = getppid();
	uid_t uid;
	gid_t gid;

	if (argc < 8)
		die("usage: enter-target-root PID UID GID JAVA_HOME CLASSES [-e NAME=VALUE]... -- JAVA_ARG...");
	pid = (pid_t)parse_id(argv[1], "pid");
	uid = (uid_t)parse_id(argv[2], "uid");
	gid = (gid_t)parse_id(argv[3], "gid");
	for (i = 6; i < argc && strcmp(argv[i], "--"); i++) {
		if (strcmp(argv[i], "-e") || i + 1 >= argc || !strchr(argv[i + 1], '='))
			die("expected -e NAME=VALUE or --, got '%s'", argv[i]);
		if (n_env >= MAX_ENV)
			die("more than %d environment entries", MAX_ENV);
		envp[n_env++] = argv[++i];
	}
	envp[n_env] = NULL;
	if (i >= argc - 1)
		die("no java arguments after --");
	first_arg = i + 1;

	/* 1. The host's parts, taken before leaving the host's namespace. */
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

	/* 4. Our parts under a tmpfs of our own, and a procfs of this PID namespace. */
	for (i = 0; i < (int)(sizeof(bases) / sizeof(bases[0])); i++) {
		if (is_plain_directory(bases[i]) &&
		    !mount("infertop", bases[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")) {
			base = bases[i];
			break;
		}
	}
	if (!base)
		die("the root of process %d has none of /tmp, /run, /mnt, /var/tmp, /opt to mount on", (int)pid);
	FMT(base_dir, "%s/.infertop", base);
	make_mount_point(base_dir, 1);
	FMT(path, "%s/jdk", base_dir);
	make_mount_point(path, 1);
	FMT(path, "%s/jdk/bin", base_dir);
	make_mount_point(path, 1);
	FMT(path, "%s/jdk/lib", base_dir);
	make_mount_point(path, 1);
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
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		die("cannot mount a procfs on /proc: %s", strerror(errno));

	/* 5. Unprivileged from here on. */
	drop_privileges(uid, gid, parent);
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
		java_argv[i - first_arg + 1] = strcmp(argv[i], "@CLASSES@") ? argv[i] : classes;
	if (chdir(base_dir))
		die("chdir %s: %s", base_dir, strerror(errno));
	execve(java, java_argv, envp);
	die("cannot run %s in the root of process %d: %s", java, (int)pid, strerror(errno));
	return 126;
}
