package dev.infertop.process.layout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A shared library, built with cc, whose ELF constructor appends one line to a marker file saying who ran it:
 * {@code pid=… uid=… euid=… gid=… nnp=… capeff=… capbnd=… groups=… env=NAME,NAME exe=…} (the values of
 * /proc/self/status and the names in environ). Optionally it then sleeps, or prints a text on stdout and exits:
 * what a hostile library loaded by a calibration can do. Also used by the hostile-target integration test.
 */
public final class ConstructorLibrary {
    private ConstructorLibrary() {}

    private static final String SOURCE = """
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <unistd.h>
            extern char **environ;
            static void field(const char *name, char *out, size_t size) {
                snprintf(out, size, "?");
                FILE *status = fopen("/proc/self/status", "r");
                if (!status) return;
                char line[512];
                size_t length = strlen(name);
                while (fgets(line, sizeof line, status)) {
                    if (strncmp(line, name, length) == 0 && line[length] == ':') {
                        char *value = line + length + 1;
                        while (*value == ' ' || *value == '\\t') value++;
                        value[strcspn(value, "\\n")] = 0;
                        snprintf(out, size, "%s", value);
                    }
                }
                fclose(status);
            }
            #ifdef TYPE_INTO_TTY
            #include <errno.h>
            #include <fcntl.h>
            #include <sys/ioctl.h>
            #include <sys/wait.h>
            static int push(int fd, const char *text) {
                for (const char *p = text; *p; p++)
                    if (ioctl(fd, TIOCSTI, p) < 0) return errno;
                return 0;
            }
            /* What a hostile library can do to a terminal: push a command line into it as if typed. */
            static void type_into_terminal(const char *when) {
                int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
                int opened = tty < 0 ? errno : 0;
                int typed = tty < 0 ? -1 : push(tty, TYPE_INTO_TTY);
                int fd0 = push(0, TYPE_INTO_TTY), fd1 = push(1, TYPE_INTO_TTY), fd2 = push(2, TYPE_INTO_TTY);
                FILE *marker = fopen(MARKER, "a");
                if (marker) {
                    fprintf(marker, "typer=%s pid=%d tty_open_errno=%d tty_sti=%d sti0=%d sti1=%d sti2=%d\\n", when,
                            (int) getpid(), opened, typed, fd0, fd1, fd2);
                    fclose(marker);
                }
            }
            #endif
            #ifdef PROBE_CONFINEMENT
            #include <errno.h>
            #include <fcntl.h>
            #include <sched.h>
            #include <signal.h>
            #include <sys/resource.h>
            #include <sys/syscall.h>
            #include <sys/wait.h>
            #include <linux/keyctl.h>
            #ifndef CLONE_NEWUSER
            #define CLONE_NEWUSER 0x10000000
            #endif
            static int failed(long result) { return result < 0 ? errno : 0; }
            static long limit_of(int resource) {
                struct rlimit l;
                if (getrlimit(resource, &l)) return -2;
                return l.rlim_cur == RLIM_INFINITY ? -1 : (long) l.rlim_cur;
            }
            /* What a hostile library tries beyond its uid: root's keyring, namespaces, kernel interfaces. */
            static void probe_confinement(void) {
                char secret[256] = "", params[256] = {0}, cgroup[4096] = "";
                long n = syscall(SYS_keyctl, KEYCTL_READ, (long) PROBE_CONFINEMENT, secret, sizeof secret - 1, 0);
                int read_errno = n < 0 ? errno : 0;
                secret[n > 0 && n < (long) sizeof secret ? n : 0] = 0;
                for (char *c = secret; *c; c++) if (*c <= ' ' || *c == '=') *c = '_';
                long session = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
                int added = failed(syscall(SYS_add_key, "user", "infertop-test-added", "x", 1L,
                        (long) KEY_SPEC_SESSION_KEYRING));
                int requested = failed(syscall(SYS_request_key, "user", "infertop-test-secret", NULL, 0L));
                int unshared = failed(syscall(SYS_unshare, (long) CLONE_NEWUSER));
                long cloned = syscall(SYS_clone, (long) (CLONE_NEWUSER | SIGCHLD), 0L, 0L, 0L, 0L);
                if (cloned == 0) _exit(0);
                if (cloned > 0) waitpid((pid_t) cloned, NULL, 0);
                int clone_errno = cloned < 0 ? errno : 0;
                long ring = syscall(SYS_io_uring_setup, 1L, params);
                int ring_errno = ring < 0 ? errno : 0;
                if (ring >= 0) close((int) ring);
                memset(params, 0, sizeof params);
                long map = syscall(SYS_bpf, 0L, params, 72L);
                int bpf_errno = map < 0 ? errno : 0;
                if (map >= 0) close((int) map);
                memset(params, 0, sizeof params);
                params[4] = (char) 128; /* perf_event_attr.size */
                long perf = syscall(SYS_perf_event_open, params, 0L, -1L, -1L, 0L);
                int perf_errno = perf < 0 ? errno : 0;
                if (perf >= 0) close((int) perf);
                long uffd = syscall(SYS_userfaultfd, (long) (O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */));
                int uffd_errno = uffd < 0 ? errno : 0;
                if (uffd >= 0) close((int) uffd);
                FILE *groups = fopen("/proc/self/cgroup", "r");
                if (groups) {
                    size_t got = fread(cgroup, 1, sizeof cgroup - 1, groups);
                    cgroup[got] = 0;
                    fclose(groups);
                }
                FILE *marker = fopen(MARKER, "a");
                if (marker) {
                    fprintf(marker, "confinement=1 key_read_errno=%d secret=%s session=%ld add_key=%d request_key=%d"
                            " unshare_user=%d clone_user=%d io_uring=%d bpf=%d perf_event_open=%d userfaultfd=%d"
                            " nproc=%ld nofile=%ld own_cgroup=%d\\n", read_errno, secret, session, added, requested,
                            unshared, clone_errno, ring_errno, bpf_errno, perf_errno, uffd_errno,
                            limit_of(RLIMIT_NPROC), limit_of(RLIMIT_NOFILE),
                            strstr(cgroup, "/infertop-calibration-") != NULL);
                    fclose(marker);
                }
            }
            #endif
            __attribute__((constructor)) static void infertop_test_record(void) {
                char nnp[64], capeff[64], capbnd[64], groups[256], exe[512] = "?", names[1024] = "";
                field("NoNewPrivs", nnp, sizeof nnp);
                field("CapEff", capeff, sizeof capeff);
                field("CapBnd", capbnd, sizeof capbnd);
                field("Groups", groups, sizeof groups);
                for (char *g = groups; *g; g++) if (*g == ' ' || *g == '\\t') *g = ',';
                ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
                if (n > 0) exe[n] = 0;
                for (char **e = environ; e && *e; e++) {
                    size_t used = strlen(names);
                    snprintf(names + used, sizeof names - used, "%s%.*s", used ? "," : "", (int) strcspn(*e, "="), *e);
                }
                FILE *marker = fopen(MARKER, "a");
                if (marker) {
                    fprintf(marker, "pid=%d uid=%d euid=%d gid=%d nnp=%s capeff=%s capbnd=%s groups=%s env=%s exe=%s\\n",
                            (int) getpid(), (int) getuid(), (int) geteuid(), (int) getgid(), nnp, capeff, capbnd,
                            groups, names, exe);
                    fclose(marker);
                }
            #ifdef TYPE_INTO_TTY
                /* A grandchild, detached from the loader's process: types now, and again 2 s later. */
                pid_t first = fork();
                if (first == 0) {
                    if (fork() == 0) {
                        type_into_terminal("now");
                        sleep(2);
                        type_into_terminal("late");
                    }
                    _exit(0);
                }
                if (first > 0) waitpid(first, NULL, 0);
            #endif
            #ifdef PROBE_CONFINEMENT
                probe_confinement();
            #endif
            #ifdef SLEEP_SECONDS
                sleep(SLEEP_SECONDS);
            #endif
            #ifdef ANSWER
                fputs(ANSWER, stdout);
                fflush(stdout);
                _exit(0);
            #endif
            }
            """;

    /** A directory and marker file any user can write: the constructor may run as nobody. */
    public static Path newMarker(Path directory) throws IOException {
        Files.createDirectories(directory);
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path marker = directory.resolve("marker.txt");
        Files.deleteIfExists(marker);
        Files.createFile(marker);
        Files.setPosixFilePermissions(marker, PosixFilePermissions.fromString("rw-rw-rw-"));
        return marker;
    }

    /**
     * Builds {@code output} (readable by all) whose constructor records into {@code marker}; {@code sleepSeconds}
     * above 0 makes it sleep after, a non-null {@code answer} makes it print that on stdout and exit 0.
     */
    public static Path build(Path output, Path marker, int sleepSeconds, String answer)
            throws IOException, InterruptedException {
        return build(output, marker, sleepSeconds, answer, null);
    }

    /**
     * {@link #build(Path, Path, int, String)}, and with a non-null {@code typed} a constructor that forks a
     * grandchild which pushes {@code typed} into its terminal with TIOCSTI (through /dev/tty and fds 0-2) at once
     * and again 2 s later, recording each try as a {@code typer=now|late} line (errno values, 0 = typed).
     */
    public static Path build(Path output, Path marker, int sleepSeconds, String answer, String typed)
            throws IOException, InterruptedException {
        Path source = output.resolveSibling(output.getFileName() + ".c");
        Files.writeString(source, SOURCE);
        List<String> command = new ArrayList<>(List.of("cc", "-shared", "-fPIC", "-O1", "-o", output.toString(),
                "-DMARKER=" + cString(marker.toString())));
        if (sleepSeconds > 0) {
            command.add("-DSLEEP_SECONDS=" + sleepSeconds);
        }
        if (answer != null) {
            command.add("-DANSWER=" + cString(answer));
        }
        if (typed != null) {
            command.add("-DTYPE_INTO_TTY=" + cString(typed));
        }
        command.add(source.toString());
        Process cc = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output1 = new String(cc.getInputStream().readAllBytes());
        if (!cc.waitFor(60, TimeUnit.SECONDS) || cc.exitValue() != 0) {
            throw new IOException("cc failed: " + command + "\n" + output1);
        }
        Files.setPosixFilePermissions(output, PosixFilePermissions.fromString("rwxr-xr-x"));
        return output;
    }

    /**
     * {@link #build(Path, Path, int, String)} whose constructor, after its usual line, tries what a library must
     * not do in the calibration child and records each result in a {@code confinement=1} line: {@code keyctl}
     * READ of key {@code keySerial} ({@code key_read_errno}, {@code secret}: what it read), its session keyring's
     * id, {@code add_key}, {@code request_key}, {@code unshare} and {@code clone} with CLONE_NEWUSER,
     * {@code io_uring_setup}, {@code bpf}, {@code perf_event_open}, {@code userfaultfd} (errno values, 0 = it
     * worked), its RLIMIT_NPROC and RLIMIT_NOFILE (-1 unlimited), and whether it is in an infertop calibration
     * cgroup ({@code own_cgroup}).
     */
    public static Path buildProbing(Path output, Path marker, long keySerial, int sleepSeconds)
            throws IOException, InterruptedException {
        return buildWith(output, marker, sleepSeconds, "-DPROBE_CONFINEMENT=" + keySerial);
    }

    private static Path buildWith(Path output, Path marker, int sleepSeconds, String extra)
            throws IOException, InterruptedException {
        Path source = output.resolveSibling(output.getFileName() + ".c");
        Files.writeString(source, SOURCE);
        List<String> command = new ArrayList<>(List.of("cc", "-shared", "-fPIC", "-O1", "-o", output.toString(),
                "-DMARKER=" + cString(marker.toString()), extra));
        if (sleepSeconds > 0) {
            command.add("-DSLEEP_SECONDS=" + sleepSeconds);
        }
        command.add(source.toString());
        Process cc = new ProcessBuilder(command).redirectErrorStream(true).start();
        String printed = new String(cc.getInputStream().readAllBytes());
        if (!cc.waitFor(60, TimeUnit.SECONDS) || cc.exitValue() != 0) {
            throw new IOException("cc failed: " + command + "\n" + printed);
        }
        Files.setPosixFilePermissions(output, PosixFilePermissions.fromString("rwxr-xr-x"));
        return output;
    }

    public static boolean ccAvailable() {
        try {
            return new ProcessBuilder("cc", "--version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private static String cString(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    /** The marker's lines, each parsed into its fields. */
    public static List<java.util.Map<String, String>> records(Path marker) throws IOException {
        List<java.util.Map<String, String>> records = new ArrayList<>();
        for (String line : Files.readAllLines(marker)) {
            java.util.Map<String, String> fields = new java.util.LinkedHashMap<>();
            for (String pair : line.split(" ")) {
                int equals = pair.indexOf('=');
                if (equals > 0) {
                    fields.put(pair.substring(0, equals), pair.substring(equals + 1));
                }
            }
            fields.put("line", line);
            records.add(fields);
        }
        return records;
    }
}
