package dev.infertop.it;

import dev.infertop.process.layout.ConstructorLibrary;
import dev.infertop.process.layout.Keyrings;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hostile launched command: {@code infertop --user nobody --lib libllama.so -- HOSTILE}, where HOSTILE, as
 * nobody, records what it reached (its terminal, its environment, a key in the session keyring of whoever
 * started infertop), then leaves two grandchildren behind and exits: a typer that stays in its session, waits
 * until infertop has exited and then pushes a command line into its terminal with TIOCSTI and takes the
 * terminal's foreground (tcsetpgrp); and a daemon that leaves its session (setsid) and waits forever. The
 * command used to run in root's session with root's terminal as its controlling terminal and root's whole
 * environment, and only its pid was signalled at the end: the typer then typed into root's shell, which ran the
 * line as root.
 */
class LaunchedCommandIT {
    private static final String NOBODY = "65534";
    /** What the command may find in its environment: a login's few variables and what --env gives. */
    private static final Set<String> ALLOWED = Set.of("PATH", "TERM", "LANG", "HOME", "USER", "LOGNAME",
            "INFERTOP_TEST_PASSED");

    private static final String HOSTILE = """
            #include <errno.h>
            #include <fcntl.h>
            #include <signal.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <sys/ioctl.h>
            #include <sys/syscall.h>
            #include <sys/wait.h>
            #include <termios.h>
            #include <unistd.h>
            #include <linux/keyctl.h>
            extern char **environ;
            static const char *dir;
            static FILE *report(const char *name) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", dir, name);
                return fopen(path, "a");
            }
            static void write_pid(const char *name) {
                FILE *f = report(name);
                if (f) { fprintf(f, "%d\\n", (int) getpid()); fclose(f); }
            }
            static int push(int fd, const char *text) {
                for (const char *p = text; *p; p++)
                    if (ioctl(fd, TIOCSTI, p) < 0) return errno;
                return 0;
            }
            /* Stays in the command's session; once infertop is gone, types into the terminal and takes it. */
            static void typer(pid_t infertop, const char *typed) {
                write_pid("typer.pid");
                while (kill(infertop, 0) == 0 || errno == EPERM) usleep(100000);
                usleep(500000); /* the shell after infertop reads its terminal again */
                signal(SIGTTOU, SIG_IGN);
                char line[4096];
                snprintf(line, sizeof line, "touch %s\\n", typed);
                int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
                int opened = tty < 0 ? errno : 0;
                int sti = tty < 0 ? -1 : push(tty, line);
                int sti0 = push(0, line), sti1 = push(1, line), sti2 = push(2, line);
                int foreground = tty < 0 ? -1 : (tcsetpgrp(tty, getpgrp()) < 0 ? errno : 0);
                FILE *f = report("typer.txt");
                if (f) {
                    fprintf(f, "typer=1 tty_open_errno=%d sti=%d sti0=%d sti1=%d sti2=%d tcsetpgrp=%d\\n", opened, sti,
                            sti0, sti1, sti2, foreground);
                    fclose(f);
                }
                for (;;) pause();
            }
            int main(int argc, char **argv) {
                dir = argv[1];
                long serial = atol(argv[3]);
                pid_t infertop = getppid();
                char secret[256] = "", names[4096] = "";
                long n = serial ? syscall(SYS_keyctl, KEYCTL_READ, serial, secret, sizeof secret - 1, 0) : -1;
                int key_errno = n < 0 ? errno : 0;
                secret[n > 0 && n < (long) sizeof secret ? n : 0] = 0;
                for (char *c = secret; *c; c++) if (*c <= ' ' || *c == '=') *c = '_';
                for (char **e = environ; e && *e; e++) {
                    size_t used = strlen(names);
                    snprintf(names + used, sizeof names - used, "%s%.*s", used ? "," : "", (int) strcspn(*e, "="), *e);
                }
                int tty = open("/dev/tty", O_RDWR | O_NOCTTY);
                int tty_errno = tty < 0 ? errno : 0;
                const char *vault = getenv("VAULT_TOKEN"), *passed = getenv("INFERTOP_TEST_PASSED");
                FILE *f = report("command.txt");
                if (f) {
                    fprintf(f, "uid=%d tty_open_errno=%d stdin_tty=%d stdout_tty=%d stderr_tty=%d vault=%s passed=%s"
                            " key_read_errno=%d secret=%s env=%s\\n", (int) getuid(), tty_errno, isatty(0), isatty(1),
                            isatty(2), vault ? vault : "", passed ? passed : "", key_errno, secret, names);
                    fclose(f);
                }
                if (fork() == 0) {
                    if (fork() == 0) typer(infertop, argv[2]);
                    _exit(0);
                }
                wait(NULL);
                if (fork() == 0) {
                    if (fork() == 0) {
                        setsid();
                        write_pid("daemon.pid");
                        for (;;) pause();
                    }
                    _exit(0);
                }
                wait(NULL);
                printf("hostile command ran\\n");
                return 0;
            }
            """;

    private static LlamaCppWorkload workload;

    private Path directory;
    private Path hostile;

    @BeforeAll
    static void requirements() {
        workload = Requirements.canTraceLlamaCpp();
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/setpriv")), "needs setpriv (util-linux) for --user");
        Requirements.require(ConstructorLibrary.ccAvailable(), "needs cc to build the hostile command");
    }

    @BeforeEach
    void buildHostile() throws Exception {
        directory = Files.createTempDirectory("infertop-launched-");
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx")); // nobody reports here
        Files.writeString(directory.resolve("hostile.c"), HOSTILE);
        hostile = directory.resolve("hostile");
        Processes.output("cc", "-O1", "-o", hostile.toString(), directory.resolve("hostile.c").toString());
        Files.setPosixFilePermissions(hostile, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (String left : List.of("typer.pid", "daemon.pid")) {
            recordedPid(left).flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroyForcibly);
        }
        try (Stream<Path> tree = Files.walk(directory)) {
            for (Path path : tree.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    /** The options that launch the hostile command as nobody; it finds key {@code serial} (0: none). */
    private List<String> hostileLaunch(Path typed, long serial, String... options) {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--layers", "token", "--user", "nobody",
                "--lib", workload.sourceBuildTool("llama-bench").getParent().resolve("libllama.so").toString()));
        args.addAll(List.of(options));
        args.addAll(List.of("--", hostile.toString(), directory.toString(), typed.toString(), Long.toString(serial)));
        return args;
    }

    /**
     * From an interactive root shell in a real terminal (tmux), as a user runs it. The typer waits for infertop's
     * exit and types into the terminal: the shell reads on, so a line typed would run as root. Now the command
     * had no controlling terminal (/dev/tty: ENXIO) and no descriptor of the terminal, and its tree is killed as
     * infertop ends: no line is typed, the terminal's foreground is never taken, no grandchild is left.
     */
    @Test
    void aGrandchildOfTheCommandCannotTypeIntoRootsTerminalOrTakeIt() throws Exception {
        TmuxPane.require();
        Path typed = directory.resolve("typed-as-root");
        String line = Path.of("src/scripts/infertop").toAbsolutePath() + " " + String.join(" ", hostileLaunch(typed, 0))
                + " >" + directory.resolve("out.json") + " 2>" + directory.resolve("err.txt")
                + "; echo INFERTOP-DONE-$?; sh -i";
        String session = "launched-typer-" + ProcessHandle.current().pid();
        String screen;
        try (TmuxPane pane = TmuxPane.startShell(session, 160, 40, directory, line)) {
            pane.awaitScreen("infertop's end, then the interactive shell", s -> s.contains("INFERTOP-DONE-"), 180);
            Thread.sleep(4000); // the typer's try (0.5 s after infertop's end), and the shell reading what was typed
            screen = pane.capture();
        }
        String err = Files.readString(directory.resolve("err.txt"));
        Map<String, String> command = record("command.txt");
        Optional<Map<String, String>> typer = Files.exists(directory.resolve("typer.txt"))
                ? Optional.of(record("typer.txt")) : Optional.empty();
        System.out.println("launched command: " + command.get("line") + "\ntyper: " + typer.map(t -> t.get("line"))
                .orElse("(never tried: killed with the command's tree)") + "\nscreen:\n" + screen + "\nstderr:\n" + err);
        assertTrue(screen.contains("INFERTOP-DONE-0"), screen + "\n" + err);
        assertFalse(Files.exists(typed), "a line typed by the command's grandchild ran as root; screen:\n" + screen);
        assertFalse(screen.contains("touch " + typed), "text typed by the command reached root's terminal:\n" + screen);
        assertEquals(NOBODY, command.get("uid"), command.get("line"));
        assertEquals("6", command.get("tty_open_errno"), "no controlling terminal (ENXIO): " + command.get("line"));
        assertEquals(List.of("0", "0", "0"), List.of(command.get("stdin_tty"), command.get("stdout_tty"),
                command.get("stderr_tty")), "no descriptor of the terminal: " + command.get("line"));
        typer.ifPresent(t -> assertFalse("0".equals(t.get("tcsetpgrp")), "the terminal's foreground was taken: "
                + t.get("line")));
        assertGone("typer.pid");
        assertGone("daemon.pid");
    }

    /**
     * Started with VAULT_TOKEN in infertop's environment and a secret in the session keyring of the thread that
     * starts it (a root shell's, inherited by infertop): the command sees neither, only a login's few variables;
     * its output comes through infertop (stderr with --json); the daemon it left behind, outside its session
     * and parent, is gone with infertop.
     */
    @Test
    void theCommandGetsNothingOfRootsAndLeavesNothingBehind() throws Exception {
        AtomicReference<Object> started = new AtomicReference<>();
        Thread starter = new Thread(() -> {
            try {
                long serial = Keyrings.plantInNewSession("infertop-test-root-session", "infertop-test-secret",
                        "root-secret-42");
                started.set(InfertopProcess.start(Map.of("VAULT_TOKEN", "planted-root-token"),
                        hostileLaunch(directory.resolve("typed"), serial).toArray(String[]::new)));
            } catch (Throwable e) {
                started.set(e);
            }
        });
        starter.start();
        starter.join();
        if (started.get() instanceof Throwable failure) {
            throw new AssertionError(failure);
        }
        try (InfertopProcess infertop = (InfertopProcess) started.get()) {
            assertEquals(0, infertop.waitFor(180), infertop.stderrText());
            Map<String, String> command = record("command.txt");
            System.out.println("launched command: " + command.get("line"));
            assertEquals("", command.get("vault"), "root's VAULT_TOKEN reached the command: " + command.get("line"));
            Set<String> names = Set.of(command.get("env").split(","));
            assertTrue(ALLOWED.containsAll(names), "only a login's variables: " + names);
            assertTrue(names.containsAll(Set.of("PATH", "HOME", "USER", "LOGNAME")), names.toString());
            assertEquals("", command.get("secret"), "root's session key reached the command: " + command.get("line"));
            assertFalse("0".equals(command.get("key_read_errno")), command.get("line"));
            assertTrue(infertop.stderrText().contains("hostile command ran"), "its output relayed: "
                    + infertop.stderrText());
        }
        assertGone("daemon.pid");
        assertGone("typer.pid");
    }

    /** --env NAME=VALUE is the one way a variable reaches the command. */
    @Test
    void envPassesAVariableToTheCommand() throws Exception {
        try (InfertopProcess infertop = InfertopProcess.start(Map.of("VAULT_TOKEN", "planted-root-token"),
                hostileLaunch(directory.resolve("typed"), 0, "--env", "INFERTOP_TEST_PASSED=yes")
                        .toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(180), infertop.stderrText());
        }
        Map<String, String> command = record("command.txt");
        assertEquals("yes", command.get("passed"), command.get("line"));
        assertEquals("", command.get("vault"), command.get("line"));
    }

    private Map<String, String> record(String name) throws IOException {
        List<Map<String, String>> records = ConstructorLibrary.records(directory.resolve(name));
        assertEquals(1, records.size(), name + ": " + records);
        return records.getFirst();
    }

    private Optional<Long> recordedPid(String name) {
        try {
            return Optional.of(Long.parseLong(Files.readString(directory.resolve(name)).strip()));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The process that wrote {@code name} has ended (infertop is gone: nothing it launched may still run). */
    private void assertGone(String name) throws InterruptedException {
        Optional<Long> pid = recordedPid(name);
        assertTrue(pid.isPresent(), "the command started its " + name + " grandchild");
        for (int i = 0; i < 50 && ProcessHandle.of(pid.get()).map(ProcessHandle::isAlive).orElse(false); i++) {
            Thread.sleep(100);
        }
        Optional<ProcessHandle> left = ProcessHandle.of(pid.get()).filter(ProcessHandle::isAlive);
        assertTrue(left.isEmpty(), "the command's grandchild " + name.replace(".pid", "") + " (pid " + pid.get()
                + ") outlived infertop: " + left.flatMap(p -> p.info().commandLine()).orElse(""));
    }
}
