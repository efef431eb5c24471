// A hostile user against a root writer (SnapshotRaceTest): run as another uid, until a deadline.
//
//   snapshot-racer watch DIR CANARY_DIR SECONDS
//     DIR is a directory this user owns. Whenever a hidden temporary name (".…tmp…") appears in it, the
//     root writer's temporary directory or file is exchanged (renameat2 RENAME_EXCHANGE), back and forth
//     until it is gone, with bait of this user's: a directory whose entries, named like a snapshot's files,
//     are symbolic links to CANARY_DIR/<name> (FIFOs every second round); for a file, a symbolic link to
//     CANARY_DIR/dag or a FIFO. A writer that works by path writes, chmods and deletes through the bait.
//   snapshot-racer flip DIR A B SECONDS
//     Exchanges DIR/A and DIR/B (entries of this user's) as fast as it can.
//
// Prints one line per exchange round won to stdout ("swapped NAME"), and "done" at the end.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *files[] = {"latency.hlog", "trace.json", "report.html", "summary.json",
                              "operator-dag.dot", "operator-dag.svg", NULL};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int exchange(int dir, const char *a, const char *b)
{
	return syscall(SYS_renameat2, dir, a, dir, b, 2 /* RENAME_EXCHANGE */);
}

static void bait_directory(int dir, const char *name, const char *canary, int fifos)
{
	char target[PATH_MAX];
	mkdirat(dir, name, 0777);
	int fd = openat(dir, name, O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return;
	fchmod(fd, 0777);
	for (int i = 0; files[i]; i++) {
		if (fifos) {
			mkfifoat(fd, files[i], 0666);
		} else {
			snprintf(target, sizeof target, "%s/%s", canary, files[i]);
			symlinkat(target, fd, files[i]);
		}
	}
	close(fd);
}

static void bait_file(int dir, const char *name, const char *canary, int fifo)
{
	char target[PATH_MAX];
	unlinkat(dir, name, 0);
	if (fifo) {
		mkfifoat(dir, name, 0666);
	} else {
		snprintf(target, sizeof target, "%s/dag", canary);
		symlinkat(target, dir, name);
	}
}

static int watch(const char *path, const char *canary, double seconds)
{
	int dir = open(path, O_DIRECTORY);
	int in = inotify_init1(IN_NONBLOCK);
	if (dir < 0 || in < 0 || inotify_add_watch(in, path, IN_CREATE) < 0) {
		perror("racer");
		return 1;
	}
	double deadline = now() + seconds;
	unsigned round = 0;
	char buffer[64 * 1024] __attribute__((aligned(8)));
	printf("ready\n");
	fflush(stdout);
	while (now() < deadline) {
		struct pollfd p = {.fd = in, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t n = read(in, buffer, sizeof buffer);
		for (char *at = buffer; n > 0 && at < buffer + n;) {
			struct inotify_event *e = (struct inotify_event *)at;
			at += sizeof *e + e->len;
			if (e->len == 0 || e->name[0] != '.' || !strstr(e->name, "tmp"))
				continue;
			round++;
			char bait[64];
			int fifo = round % 2 == 0; // links first, then FIFOs
			snprintf(bait, sizeof bait, "bait-%u", round);
			if (e->mask & IN_ISDIR)
				bait_directory(dir, bait, canary, fifo);
			else
				bait_file(dir, bait, canary, fifo);
			// Back and forth until the name is gone (renamed into place or deleted) or 2 s passed.
			int won = 0;
			for (double until = now() + 2; now() < until;) {
				if (exchange(dir, e->name, bait) != 0)
					break;
				won++;
			}
			if (won) {
				printf("swapped %s %d times\n", e->name, won);
				fflush(stdout);
			}
		}
	}
	printf("done\n");
	return 0;
}

static int flip(const char *path, const char *a, const char *b, double seconds)
{
	int dir = open(path, O_DIRECTORY);
	if (dir < 0) {
		perror("racer");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	long flips = 0;
	for (double deadline = now() + seconds; now() < deadline;)
		for (int i = 0; i < 1000; i++)
			flips += exchange(dir, a, b) == 0;
	printf("done %ld flips\n", flips);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "watch"))
		return watch(argv[2], argv[3], atof(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "flip"))
		return flip(argv[2], argv[3], argv[4], atof(argv[5]));
	fprintf(stderr, "usage: snapshot-racer watch DIR CANARY_DIR SECONDS | flip DIR A B SECONDS\n");
	return 2;
}
