// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch-target: becomes the command infertop launches (`infertop [--user U] -- CMD`), in place: the pid infertop
 * attaches its probes to while this waits is the command's own pid from its first instruction on. Run by
 * infertop as root, with its stdin the start gate (a pipe only infertop holds) and its stdout and stderr pipes
 * that infertop relays; the environment is the one infertop chose for the command.
 *
 *   launch-target [-u UID -g GID -G GID,GID...] -- EXECUTABLE ARG...
 *
 * 1. A new session (setsid): no controlling terminal, and none can be had (it opens nothing of a terminal).
 * 2. A seccomp filter (confine.h, CONFINE_TERMINAL) refusing ioctl TIOCSTI and TIOCLINUX; the command keeps every
 *    other call, and no_new_privs is not set (a user's program may run sudo): it is installed while still root.
 * 3. With -u: groups, gid and uid switched to the user's (never left at 0 when UID is not 0).
 * 4. A fresh session keyring, the user's: root's (infertop's) is left behind.
 * 5. Open files at most 1048576 (root may have raised its limit far above what a user gets).
 * 6. Every descriptor above 2 closed; then it waits for one byte on stdin (the gate), replaces stdin with
 *    /dev/null and executes EXECUTABLE with ARGs. End of file on the gate (infertop gone, or not starting the
 *    command after all) exits 125 without running anything.
 * Errors: one line on stderr ("launch-target: ..."), exit status 126; 127 when EXECUTABLE cannot be run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_GROUPS 256
#define MOST_OPEN_FILES (1 << 20)

extern char **environ;

static int exit_status = 126;

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("launch-target: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(exit_status);
}

#include "confine.h"

static long parse_id(const char *text, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || errno || v < 0 || v > 0x7fffffff)
		die("bad %s '%s'", what, text);
	return v;
}

static int parse_groups(const char *text, gid_t *groups)
{
	char copy[MAX_GROUPS * 12], *save = NULL, *item;
	int n = 0;

	if (strlen(text) >= sizeof(copy))
		die("too many groups");
	strcpy(copy, text);
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (n >= MAX_GROUPS)
			die("more than %d groups", MAX_GROUPS);
		groups[n++] = (gid_t)parse_id(item, "group");
	}
	return n;
}

int main(int argc, char **argv)
{
	gid_t groups[MAX_GROUPS];
	long uid = -1, gid = -1;
	int n_groups = 0, i, null;
	char gate;
	ssize_t got;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-u") && i + 1 < argc)
			uid = parse_id(argv[++i], "uid");
		else if (!strcmp(argv[i], "-g") && i + 1 < argc)
			gid = parse_id(argv[++i], "gid");
		else if (!strcmp(argv[i], "-G") && i + 1 < argc)
			n_groups = parse_groups(argv[++i], groups);
		else
			die("usage: launch-target [-u UID -g GID -G GID,GID...] -- EXECUTABLE ARG...");
	}
	if (i >= argc - 1)
		die("no command after --");
	if ((uid < 0) != (gid < 0))
		die("-u and -g go together");

	if (setsid() < 0)
		die("setsid: %s", strerror(errno));
	/* Only root may install a filter without no_new_privs; infertop with CAP_BPF and CAP_PERFMON alone may not:
	 * then the command goes without it (it has no terminal to push into anyway). */
	if (confine_seccomp(CONFINE_TERMINAL) && errno != EACCES)
		die("cannot install the seccomp filter: %s", strerror(errno));
	if (uid >= 0) {
		if (setgroups((size_t)n_groups, groups))
			die("setgroups: %s", strerror(errno));
		if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid))
			die("setresgid %ld: %s", gid, strerror(errno));
		if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid))
			die("setresuid %ld: %s", uid, strerror(errno));
		if (uid != 0 && (setuid(0) == 0 || geteuid() == 0))
			die("still root after switching to uid %ld", uid);
	}
	confine_fresh_session_keyring();
	confine_cap_limit(RLIMIT_NOFILE, MOST_OPEN_FILES, "open files");
	confine_close_from_3();

	do
		got = read(0, &gate, 1);
	while (got < 0 && errno == EINTR);
	if (got != 1)
		exit(125); /* not started: nothing to say */
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0)
		die("cannot make /dev/null the command's input: %s", strerror(errno));
	close(null);
	exit_status = 127;
	execve(argv[i + 1], argv + i + 1, environ);
	die("cannot run %s: %s", argv[i + 1], strerror(errno));
}
