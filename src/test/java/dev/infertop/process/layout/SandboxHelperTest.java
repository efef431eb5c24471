package dev.infertop.process.layout;

import dev.infertop.ffi.LibC;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.ToolProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The sandbox helper itself (enter-target-root, as infertop runs it: {@link SandboxHelper#command}), against what a
 * target that owns its root can do while the helper, as root, works in it: swap names for links under it, hand it a
 * tmpfs of the host's bound into the root, exit and leave its pid to another process. Also what the child is given:
 * copies it cannot write.
 */
class SandboxHelperTest {
    /** Runs of the helper against the racing target, and the time they may take: enough for the old helper to lose. */
    private static final int RACE_RUNS = 200;
    private static final long RACE_SECONDS = 150;

    @TempDir
    Path work;
    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void requirements() {
        TestRequirements.requireOrSkip(LibC.geteuid() == 0, "the sandbox helper runs as root (namespaces, mounts, "
                + "a user switch): run the tests as root");
        TestRequirements.requireOrSkip(ConstructorLibrary.ccAvailable(), "needs cc to build the test's programs");
        TestRequirements.requireOrSkip(Files.isExecutable(Path.of("/usr/bin/unshare")), "needs unshare (util-linux)");
    }

    @AfterEach
    void stop() throws Exception {
        for (Process process : started) {
            // Its children first: one left behind holds this JVM's stderr, which it inherited, and the build
            // waits for that stream to close.
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * The copies attached for the child (the JDK, the classes, a library) are read-only mounts in the child's view,
     * and a write into one its user could write on the host fails with EROFS: a directory and a file made writable
     * by everyone here, each written by the child as nobody.
     */
    @Test
    void theAttachedCopiesAreReadOnlyInTheChild() throws Exception {
        Path classes = probeClasses();
        Files.setPosixFilePermissions(classes, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path library = work.resolve("libwritable.so");
        Files.writeString(library, "written by root\n");
        Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rw-rw-rw-"));
        long self = ProcessHandle.current().pid();
        Result result = run(SandboxHelper.command(work, self, SandboxHelper.startTime(self),
                ChildCredentials.nobody("test"), classes, List.of(new SandboxHelper.Bind(library, "libwritable.so")),
                List.of(), List.of(), javaArguments("-cp", SandboxHelper.CLASSES_PLACEHOLDER, "Probe",
                        SandboxHelper.LIBS_PLACEHOLDER + "/libwritable.so")));
        assertEquals(0, result.status(), result.toString());

        List<String> lines = result.stdout().lines().toList();
        assertTrue(lines.contains("classes: Read-only file system"), "a new file in the classes: " + result);
        assertTrue(lines.contains("library: Read-only file system"), "a write into the bound library: " + result);
        List<String> mounts = lines.stream().filter(l -> l.startsWith("mount ")).toList();
        assertTrue(mounts.size() >= 4, "the tmpfs, java, the classes and the library at least: " + result);
        for (String mount : mounts) {
            assertTrue(mount.split(" ")[2].startsWith("ro,"), "a read-only mount in the child's view: " + mount);
        }
        assertEquals("written by root\n", Files.readString(library), "the host's file untouched");
        try (Stream<Path> files = Files.list(classes)) {
            assertEquals(List.of("Probe.class"), files.map(p -> p.getFileName().toString()).toList());
        }
    }

    /**
     * A target in a root of its own (a tmpfs in its own mount namespace, as a container's image is) with a tmpfs
     * standing for the host's /dev/shm bound in at /dev/shm swaps its /mnt for a link to /dev/shm and back, as fast
     * as it can, while the helper runs again and again: the helper must succeed (in its private copy of the
     * namespace) or refuse, the bound tmpfs must keep its options and stay empty, nothing may appear in the
     * target's files, and the target's mounts must stay as they were.
     */
    @Test
    void aMntSwappedForALinkToABoundTmpfsNeverReachesThatTmpfs() throws Exception {
        Path racer = compile("racer", """
                #define _GNU_SOURCE
                #include <fcntl.h>
                #include <stdio.h>
                #include <unistd.h>
                #include <time.h>
                #include <sys/syscall.h>
                #define RENAME_EXCHANGE (1 << 1)
                int main(void) {
                    if (symlink("/dev/shm", "/swap")) { perror("symlink"); return 1; }
                    puts("racing"); fflush(stdout);
                    for (unsigned n = 1;; n = n * 1103515245 + 12345) {
                        syscall(SYS_renameat2, AT_FDCWD, "/mnt", AT_FDCWD, "/swap", RENAME_EXCHANGE);
                        struct timespec t0, t;
                        clock_gettime(CLOCK_MONOTONIC, &t0);
                        long hold = (n >> 8) % 500000; /* each state held 0 to 0.5 ms: some runs see one swap */
                        do clock_gettime(CLOCK_MONOTONIC, &t);
                        while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < hold);
                    }
                }
                """);
        Files.createDirectories(work.resolve("root"));
        Files.createDirectories(work.resolve("shm"));
        // The root and the "host's" tmpfs are mounted in the target's namespace only: whatever the helper does to
        // them, nothing of this machine's is touched, and they go away with the target.
        Process target = start(List.of("unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation",
                "private", "--", "/bin/sh", "-c", """
                set -e
                w="$1"
                mount -t tmpfs -o size=8m,mode=0755 infertop-test-root "$w/root"
                mount -t tmpfs -o size=2m,mode=1777 infertop-test-shm "$w/shm"
                cd "$w/root"
                mkdir -p usr proc mnt tmp dev/shm
                ln -s usr/lib lib; ln -s usr/lib64 lib64; ln -s usr/bin bin
                mount --bind /usr usr
                mount -o remount,bind,ro usr
                mount --bind "$w/shm" dev/shm
                mount -t proc proc proc
                cp "$w/racer" racer
                exec chroot "$w/root" /racer
                """, "sh", work.toString()));
        BufferedReader out = new BufferedReader(new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("racing", out.readLine(), "the target started");
        long pid = target.toHandle().descendants().filter(p -> comm(p.pid()).equals("racer")).findFirst()
                .orElseThrow().pid();
        long start = SandboxHelper.startTime(pid);
        Path targetMounts = Path.of("/proc/" + pid + "/mountinfo");
        String mountsBefore = Files.readString(targetMounts);
        String shmBefore = shmOptions(mountsBefore);
        assertTrue(shmBefore.contains("size=2048k"), shmBefore);
        Path shmSeen = Path.of("/proc/" + pid + "/root/dev/shm");

        Path classes = emptyClasses();
        List<String> command = SandboxHelper.command(work, pid, start, ChildCredentials.nobody("test"),
                classes, List.of(), List.of(), List.of(), javaArguments("-version"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RACE_SECONDS);
        int runs = 0;
        int refused = 0;
        int childFailed = 0;
        while (runs < RACE_RUNS && System.nanoTime() < deadline) {
            Result result = run(command);
            runs++;
            String state = "after run " + runs + " of the helper (" + result + ")";
            assertEquals(shmBefore, shmOptions(Files.readString(targetMounts)), "the bound tmpfs's options, " + state);
            assertEquals(List.of(), list(shmSeen), "nothing in the bound tmpfs, " + state);
            assertTrue(target.isAlive(), "the target races on, " + state);
            if (result.stderr().startsWith("enter-target-root:")) { // the helper's own word, always one line
                assertTrue(result.stderr().startsWith("enter-target-root: the root of process " + pid + " has none of"),
                        "a refusal, for want of a directory reached without a link: " + state);
                refused++;
            } else if (!result.stderr().contains("version")) {
                // The child, as nobody, finds java's own files by the name of the directory the tmpfs is on, which
                // the target renames back and forth: java (or the loader, for libjli.so) may lose a lookup and fail,
                // as any calibration the target sabotages fails. It is the helper, as root, that must not lose one.
                childFailed++;
            } else {
                assertEquals(0, result.status(), state);
            }
        }
        System.out.printf("the helper ran %d times against the /mnt swap: %d children ran java -version, %d lost a "
                + "lookup to the race, %d runs refused%n", runs, runs - refused - childFailed, childFailed, refused);
        assertTrue(runs >= 20, "only " + runs + " runs in " + RACE_SECONDS + " s");
        Path rootSeen = Path.of("/proc/" + pid + "/root");
        assertEquals(List.of(), list(rootSeen.resolve("tmp")), "nothing made in the target's /tmp");
        for (String name : List.of("mnt", "swap")) {
            if (Files.isDirectory(rootSeen.resolve(name), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                assertEquals(List.of(), list(rootSeen.resolve(name)), "nothing made in the target's /mnt");
            }
        }
        assertEquals(mountsBefore, Files.readString(targetMounts), "the target's mounts as they were");
    }

    /** A target that ended, its pid free: the helper refuses in one line. */
    @Test
    void aPidWhoseProcessEndedIsRefused() throws Exception {
        Path classes = emptyClasses();
        Process first = start(List.of("sleep", "600"));
        long pid = first.pid();
        List<String> command = SandboxHelper.command(work, pid, SandboxHelper.startTime(pid),
                ChildCredentials.nobody("test"), classes, List.of(), List.of(), List.of(), javaArguments("-version"));
        first.destroyForcibly();
        first.waitFor();
        Result stale = run(command);
        assertEquals(126, stale.status(), stale.toString());
        assertTrue(stale.stderr().startsWith("enter-target-root: "), stale.toString());
        assertEquals(1, stale.stderr().strip().lines().count(), "one line: " + stale);
    }

    /**
     * A target that ended and whose pid another process now has (made with that very pid by clone3's set_tid):
     * the helper refuses in one line, and never enters the other process's root.
     */
    @Test
    void aPidReusedByAnotherProcessIsRefused() throws Exception {
        Path reuse = compile("reuse", """
                #define _GNU_SOURCE
                #include <errno.h>
                #include <signal.h>
                #include <stdint.h>
                #include <stdio.h>
                #include <stdlib.h>
                #include <string.h>
                #include <unistd.h>
                #include <linux/sched.h>
                #include <sys/prctl.h>
                #include <sys/syscall.h>
                #include <sys/wait.h>
                int main(int argc, char **argv) {
                    pid_t tid = atoi(argv[1]);
                    pid_t parent = getpid();
                    struct clone_args args = {0};
                    args.exit_signal = SIGCHLD;
                    args.set_tid = (uint64_t)(uintptr_t)&tid;
                    args.set_tid_size = 1;
                    long pid = syscall(SYS_clone3, &args, sizeof(args));
                    if (pid < 0) { printf("clone3 %s\\n", strerror(errno)); return 1; }
                    if (pid == 0) {
                        // Killed with its parent, also where the parent died before this line ran (a loaded
                        // machine): the child would otherwise pause for ever, holding the test JVM's stderr.
                        prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != parent) _exit(0);
                        pause();
                        _exit(0);
                    }
                    printf("%ld\\n", pid); fflush(stdout);
                    waitpid(pid, NULL, 0);
                    return 0;
                }
                """);
        Path classes = emptyClasses();
        for (int attempt = 0; ; attempt++) {
            Process first = start(List.of("sleep", "600"));
            long pid = first.pid();
            long start = SandboxHelper.startTime(pid);
            // A directory of its own each attempt, as each calibration has: the helper and the JDK are laid there.
            Path attemptWork = Files.createDirectory(work.resolve("attempt-" + attempt));
            List<String> command = SandboxHelper.command(attemptWork, pid, start, ChildCredentials.nobody("test"),
                    classes, List.of(), List.of(), List.of(), javaArguments("-version"));
            first.destroyForcibly();
            first.waitFor();
            // Start times are in clock ticks (USER_HZ, 100 a second): the other process must start in a later
            // one to be told apart, and on a fast machine all of the above fits in one. Two ticks later it cannot.
            Thread.sleep(20);
            Process other = start(List.of(reuse.toString(), Long.toString(pid)));
            String line = new BufferedReader(new InputStreamReader(other.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            if (!Long.toString(pid).equals(line) || SandboxHelper.startTime(pid) == start) {
                assertTrue(attempt < 5, "cannot give another process pid " + pid + " in a later tick: " + line);
                other.destroyForcibly();
                other.waitFor();
                // (the pid went to some other process first: again)
                continue;
            }
            Result reused = run(command);
            assertEquals(126, reused.status(), "refused, never run in the other process's root: " + reused);
            assertTrue(reused.stderr().startsWith("enter-target-root: process " + pid + " is not the one infertop "
                    + "was given"), "one line why: " + reused);
            assertEquals(1, reused.stderr().strip().lines().count(), reused.toString());
            return;
        }
    }

    /**
     * A kernel without one of the calls the helper needs (pidfd_open 5.3, openat2 5.6, mount_setattr 5.12, the new
     * mount API 5.2), as a seccomp filter that answers ENOSYS makes it look: refused in one line that names the
     * call, and no child started by any other way.
     */
    @Test
    void aKernelWithoutTheCallsIsRefusedInOneLine() throws Exception {
        Path without = compile("without", """
                #include <errno.h>
                #include <stddef.h>
                #include <stdio.h>
                #include <stdlib.h>
                #include <unistd.h>
                #include <linux/filter.h>
                #include <linux/seccomp.h>
                #include <sys/prctl.h>
                int main(int argc, char **argv) {
                    struct sock_filter filter[] = {
                        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)atoi(argv[1]), 0, 1),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                    };
                    struct sock_fprog program = {.len = 4, .filter = filter};
                    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0)) { perror("seccomp"); return 2; }
                    execv(argv[2], argv + 2);
                    perror("execv");
                    return 2;
                }
                """);
        Path classes = emptyClasses();
        long self = ProcessHandle.current().pid();
        List<String> command = SandboxHelper.command(work, self, SandboxHelper.startTime(self),
                ChildCredentials.nobody("test"), classes, List.of(), List.of(), List.of(), javaArguments("-version"));
        // The generic system call numbers, the same on x86_64 and arm64.
        for (var call : java.util.Map.of("pidfd_open", 434, "openat2", 437, "mount_setattr", 442, "fsopen", 430)
                .entrySet()) {
            List<String> withoutIt = new ArrayList<>(List.of(without.toString(), call.getValue().toString()));
            withoutIt.addAll(command);
            Result result = run(withoutIt);
            assertEquals(126, result.status(), call.getKey() + ": " + result);
            assertTrue(result.stderr().startsWith("enter-target-root: this kernel has no " + call.getKey() + " (Linux "),
                    call.getKey() + ": " + result);
            assertEquals(1, result.stderr().strip().lines().count(), "one line: " + result);
            assertFalse(result.stderr().contains("version"), "no java started: " + result);
        }
    }

    private Path emptyClasses() throws IOException {
        Path classes = Files.createDirectory(work.resolve("classes"));
        Files.setPosixFilePermissions(classes, PosixFilePermissions.fromString("rwxr-xr-x"));
        return classes;
    }

    private record Result(int status, String stdout, String stderr) {}

    private List<String> javaArguments(String... arguments) {
        List<String> all = new ArrayList<>(CalibrationSandbox.JVM_OPTIONS);
        all.addAll(List.of(arguments));
        return all;
    }

    private Process start(List<String> command) throws IOException {
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        started.add(process);
        return process;
    }

    /** Runs the helper as CalibrationSandbox does (empty environment, the run's directory, stdin /dev/null). */
    private Result run(List<String> command) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().clear();
        Process helper = builder.start();
        CompletableFuture<String> stdout = CompletableFuture.supplyAsync(() -> read(helper.getInputStream()));
        CompletableFuture<String> stderr = CompletableFuture.supplyAsync(() -> read(helper.getErrorStream()));
        if (!helper.waitFor(60, TimeUnit.SECONDS)) {
            helper.destroyForcibly();
            fail("the helper ran past 60 s");
        }
        return new Result(helper.exitValue(), stdout.get(), stderr.get());
    }

    private static String read(java.io.InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** The mount and superblock options of the tmpfs at /dev/shm in a mountinfo. */
    private static String shmOptions(String mountinfo) {
        return mountinfo.lines().filter(l -> l.split(" ")[4].equals("/dev/shm")).map(l -> l.split(" ")[5] + " "
                + l.substring(l.indexOf(" - ") + 3)).findFirst().orElse("(no /dev/shm)");
    }

    private static String comm(long pid) {
        try {
            return Files.readString(Path.of("/proc/" + pid + "/comm")).strip();
        } catch (IOException e) {
            return "";
        }
    }

    private static List<String> list(Path directory) throws IOException {
        try (Stream<Path> entries = Files.list(directory)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private Path compile(String name, String source) throws Exception {
        Path file = work.resolve(name + ".c");
        Files.writeString(file, source);
        Process cc = new ProcessBuilder("cc", "-O2", "-o", work.resolve(name).toString(), file.toString())
                .redirectErrorStream(true).start();
        String output = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, cc.waitFor(), output);
        return work.resolve(name);
    }

    /**
     * A classes directory with Probe: it tries to make a file in its own classes directory and to write the file
     * named by its argument, printing the reason each fails, then prints each mount of the sandbox's tmpfs and
     * below it as "mount MOUNT_POINT OPTIONS".
     */
    private Path probeClasses() throws Exception {
        Path source = work.resolve("src/Probe.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, """
                import java.nio.file.*;
                public class Probe {
                    public static void main(String[] args) throws Exception {
                        Path classes = Path.of(Probe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
                        try {
                            Files.writeString(classes.resolve("planted"), "x");
                            System.out.println("classes: written");
                        } catch (FileSystemException e) {
                            System.out.println("classes: " + e.getReason());
                        }
                        try {
                            Files.writeString(Path.of(args[0]), "written by the child");
                            System.out.println("library: written");
                        } catch (FileSystemException e) {
                            System.out.println("library: " + e.getReason());
                        }
                        Path sandbox = classes.getParent();
                        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
                            String[] fields = line.split(" ");
                            String source = line.substring(line.indexOf(" - ") + 3).split(" ")[1];
                            Path point = Path.of(fields[4]);
                            if (point.startsWith(sandbox) || point.equals(sandbox.getParent()) && source.equals("infertop")) {
                                System.out.println("mount " + fields[4] + " " + fields[5]);
                            }
                        }
                    }
                }
                """);
        Path classes = work.resolve("classes");
        Files.createDirectories(classes);
        int status = ToolProvider.getSystemJavaCompiler().run(null, null, null, "-d", classes.toString(),
                source.toString());
        assertEquals(0, status, "javac Probe.java");
        assertFalse(Files.exists(classes.resolve("planted")));
        return classes;
    }
}
