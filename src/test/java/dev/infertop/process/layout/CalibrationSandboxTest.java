package dev.infertop.process.layout;

import dev.infertop.ffi.LibC;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The calibration child, for real: started as root by this test JVM, it must run the library's code as another
 * user with no privileges, come back with the same layout an in-process calibration finds, be killed at its
 * time limit, and have its answer checked. The libraries with constructors are built with cc here.
 */
class CalibrationSandboxTest {
    @TempDir
    Path work;
    /** Where constructors write their marker: outside {@link #work}, which only root may enter. */
    private Path shared;

    @AfterEach
    void removeShared() throws Exception {
        if (shared != null) {
            try (var files = Files.list(shared)) {
                for (Path file : files.toList()) {
                    Files.delete(file);
                }
            }
            Files.delete(shared);
        }
    }

    private Path newMarker() throws Exception {
        shared = Files.createTempDirectory("infertop-marker-");
        return ConstructorLibrary.newMarker(shared);
    }

    @BeforeEach
    void requirements() {
        TestRequirements.requireOrSkip(LibC.geteuid() == 0, "the calibration child's sandbox is made as root "
                + "(namespaces, then a user switch): run the tests as root");
        TestRequirements.requireOrSkip(ConstructorLibrary.ccAvailable(), "needs cc to build test libraries");
    }

    @Test
    void theChildFindsTheSameLayoutAsAnInProcessCalibration() throws Exception {
        // The source build, and the prebuilt npm library (RUNPATH $ORIGIN: LD_LIBRARY_PATH in the child).
        for (LlamaReleases release : List.of(LlamaReleases.sourceBuild(), LlamaReleases.prebuilt())) {
            Path library = work.resolve(release.name().replace(' ', '-')).resolve("libggml-base.so");
            Files.createDirectories(library.getParent());
            Files.copy(release.require().libggmlBase(), library, StandardCopyOption.REPLACE_EXISTING);
            CalibratedLayout inProcess = LayoutCalibrator.calibrateUncached(library);

            LayoutCalibrator calibrator = new LayoutCalibrator(new LayoutCache(work.resolve("layouts")));
            long start = System.nanoTime();
            CalibratedLayout inChild = calibrator.calibrate(library);
            long childMillis = (System.nanoTime() - start) / 1_000_000;
            start = System.nanoTime();
            CalibratedLayout cached = calibrator.calibrate(library);
            long cachedMicros = (System.nanoTime() - start) / 1_000;
            System.out.printf("calibration child for %s: %d ms; the same build from the cache: %d µs%n", release,
                    childMillis, cachedMicros);
            assertEquals(inProcess, inChild, release.name());
            assertEquals(inChild, cached, release.name());
        }
    }

    @Test
    void theLibrarysCodeRunsAsNobodyWithoutPrivilegesOrEnvironment() throws Exception {
        Path marker = newMarker();
        Path library = ConstructorLibrary.build(work.resolve("libggml-base.so"), marker, 0, null);
        CalibrationException e = assertThrows(CalibrationException.class,
                () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts"))).calibrate(library));
        assertEquals("cannot calibrate " + library + ": it lacks ggml_init", e.getMessage(), "the child's reason, "
                + "naming the file the parent knows");

        List<Map<String, String>> records = ConstructorLibrary.records(marker);
        assertEquals(1, records.size(), "the constructor ran once, in the child: " + records);
        Map<String, String> child = records.getFirst();
        ChildCredentials nobody = ChildCredentials.nobody("test");
        assertEquals(Integer.toString(nobody.uid()), child.get("uid"), child.get("line"));
        assertEquals(Integer.toString(nobody.uid()), child.get("euid"));
        assertEquals(Integer.toString(nobody.gid()), child.get("gid"));
        assertEquals("1", child.get("nnp"), "no_new_privs");
        assertEquals("0000000000000000", child.get("capeff"), "no effective capability");
        assertEquals("0000000000000000", child.get("capbnd"), "empty bounding set");
        assertEquals("", child.get("groups"), "no supplementary groups");
        assertEquals("GGML_NO_BACKTRACE", child.get("env"), "nothing but what calibration sets itself");
        assertTrue(child.get("exe").endsWith("/bin/java"), child.get("line"));
        assertEquals("1", child.get("pid"), "PID 1 of a PID namespace of its own: " + child.get("line"));
        assertNothingOfTheChildLeft();
    }

    /** Nothing this test started through the sandbox is running any more (the helper, its child, theirs). */
    private static void assertNothingOfTheChildLeft() throws Exception {
        List<ProcessHandle> left = List.of();
        for (int i = 0; i < 50; i++) {
            left = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).toList();
            if (left.isEmpty()) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("still running: " + left.stream().map(p -> p.pid() + " "
                + p.info().commandLine().orElse("?")).toList());
    }

    /**
     * A library whose constructor forks a grandchild that pushes a command line into its terminal with TIOCSTI, at
     * once and 2 s later (what a hostile library did to root's shell when the child kept infertop's terminal): in
     * the sandbox it has no terminal (/dev/tty: ENXIO), the ioctl is refused on every descriptor (EPERM), and the
     * grandchild dies with the child, before its second try.
     */
    @Test
    void aGrandchildNeitherTypesIntoATerminalNorOutlivesTheChild() throws Exception {
        Path marker = newMarker();
        Path library = ConstructorLibrary.build(work.resolve("libggml-base.so"), marker, 0, null,
                "echo typed-by-the-library\n");
        assertThrows(CalibrationException.class,
                () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts"))).calibrate(library));
        Thread.sleep(3000); // past the grandchild's second try, had it lived
        List<Map<String, String>> typers = ConstructorLibrary.records(marker).stream()
                .filter(r -> r.containsKey("typer")).toList();
        assertEquals(1, typers.size(), "the grandchild tried once, and was gone before its second try: " + typers);
        Map<String, String> now = typers.getFirst();
        assertEquals("now", now.get("typer"), now.get("line"));
        assertEquals("6", now.get("tty_open_errno"), "no controlling terminal (ENXIO): " + now.get("line"));
        assertEquals("1", now.get("sti0"), "TIOCSTI refused (EPERM): " + now.get("line"));
        assertEquals("1", now.get("sti1"), now.get("line"));
        assertEquals("1", now.get("sti2"), now.get("line"));
        assertNothingOfTheChildLeft();
    }

    @Test
    void theChildRunsAsTheTargetsUserWhenTheTargetIsNotRoot() throws Exception {
        Path marker = newMarker();
        Path library = ConstructorLibrary.build(work.resolve("libggml-base.so"), marker, 0, null);
        Process target = new ProcessBuilder("setpriv", "--reuid=4321", "--regid=4322", "--clear-groups", "sleep", "60")
                .start();
        try {
            awaitUid(target.pid(), "4321");
            assertThrows(CalibrationException.class, () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts")))
                    .calibrate(library, OptionalInt.of((int) target.pid())));
        } finally {
            target.destroyForcibly();
        }
        Map<String, String> child = ConstructorLibrary.records(marker).getFirst();
        assertEquals("4321", child.get("uid"), child.get("line"));
        assertEquals("4322", child.get("gid"), child.get("line"));
        assertEquals("1", child.get("nnp"));
    }

    @Test
    void siblingsFoundThroughOriginAreFoundInTheChildAndAMissingOneIsNamed() throws Exception {
        Path marker = newMarker();
        // The child reads the sibling by path, as its own user: the directories must let nobody through.
        Files.setPosixFilePermissions(work, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path directory = work.resolve("lib");
        Files.createDirectories(directory);
        ConstructorLibrary.build(directory.resolve("libsibling.so"), marker, 0, null);
        Path withOrigin = linkAgainstSibling(directory, "libggml-base.so", "$ORIGIN");
        CalibrationException found = assertThrows(CalibrationException.class,
                () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts"))).calibrate(withOrigin));
        assertEquals("cannot calibrate " + withOrigin + ": it lacks ggml_init", found.getMessage(),
                "loaded, its sibling with it");
        assertEquals(1, ConstructorLibrary.records(marker).size(), "the sibling's constructor ran in the child");

        Path without = linkAgainstSibling(directory, "libggml-other.so", null);
        CalibrationException missing = assertThrows(CalibrationException.class,
                () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts"))).calibrate(without));
        assertTrue(missing.getMessage().startsWith("cannot calibrate " + without + ": dlopen failed (libsibling.so: "
                + "cannot open shared object file"), missing.getMessage());
    }

    /**
     * A library the target maps needs a file only root may read (0600): a root target loads it; the calibration
     * child (as nobody, the target being root) gets it as a bind of the very file, whose mode it cannot pass.
     * Nothing is copied anywhere (infertop used to copy it 0644 into a 0755 directory for the child), and the
     * child's failure names the file.
     */
    @Test
    void aLibraryOnlyRootMayReadIsNeverMadeReadableToTheChild() throws Exception {
        Files.setPosixFilePermissions(work, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path directory = work.resolve("app");
        Files.createDirectories(directory);
        Path secret = directory.resolve("libsibling.so");
        Files.writeString(directory.resolve("secret.c"), "int infertop_test_secret = 424242;\n");
        compile(List.of("cc", "-shared", "-fPIC", "-o", secret.toString(), directory.resolve("secret.c").toString()));
        Files.setPosixFilePermissions(secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Path library = linkAgainstSibling(directory, "libllama.so", "$ORIGIN");
        Path loader = directory.resolve("loader");
        Files.writeString(directory.resolve("loader.c"), """
                #include <dlfcn.h>
                #include <stdio.h>
                #include <unistd.h>
                int main(int argc, char **argv) {
                    if (!dlopen(argv[1], RTLD_NOW)) { puts(dlerror()); return 1; }
                    puts("ready"); fflush(stdout); sleep(60); return 0;
                }
                """);
        compile(List.of("cc", "-o", loader.toString(), directory.resolve("loader.c").toString(), "-ldl"));
        Process target = new ProcessBuilder(loader.toString(), library.toString()).start();
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Thread watcher = Thread.ofVirtual().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try (var entries = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
                    entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("infertop-libraries-"))
                            .forEach(seen::add);
                } catch (java.io.IOException e) {
                    // keep watching
                }
            }
        });
        try {
            assertEquals("ready", new String(target.getInputStream().readNBytes(5)), "the root target loaded both");
            CalibrationException e = assertThrows(CalibrationException.class,
                    () -> new BatchCalibrator(new LayoutCache(work.resolve("layouts")), Duration.ofSeconds(30))
                            .calibrate(library, OptionalInt.of((int) target.pid())));
            // (the loader reports the last place it looked: ENOENT, not the bind's EACCES)
            assertTrue(e.getMessage().contains("dlopen failed (libsibling.so: cannot open shared object file"),
                    "the child, as nobody, cannot read the root-only file: " + e.getMessage());
        } finally {
            watcher.interrupt();
            target.destroyForcibly();
        }
        assertEquals(java.util.Set.of(), seen, "no directory of library copies");
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(secret)), "the file untouched");
    }

    private static void compile(List<String> command) throws Exception {
        Process cc = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(cc.getInputStream().readAllBytes());
        assertEquals(0, cc.waitFor(), output);
    }

    /** An empty library with a DT_NEEDED on libsibling.so in its directory, found through {@code runpath}. */
    private static Path linkAgainstSibling(Path directory, String name, String runpath) throws Exception {
        Path source = directory.resolve(name + ".c");
        Files.writeString(source, "int infertop_test_nothing(void) { return 0; }\n");
        List<String> command = new java.util.ArrayList<>(List.of("cc", "-shared", "-fPIC", "-o",
                directory.resolve(name).toString(), source.toString(), "-L" + directory, "-Wl,--no-as-needed", "-lsibling"));
        if (runpath != null) {
            command.add("-Wl,--enable-new-dtags,-rpath," + runpath);
        }
        Process cc = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(cc.getInputStream().readAllBytes());
        assertEquals(0, cc.waitFor(), output);
        return directory.resolve(name);
    }

    @Test
    void aChildPastItsTimeLimitIsKilled() throws Exception {
        Path marker = newMarker();
        Path library = ConstructorLibrary.build(work.resolve("libggml-base.so"), marker, 3600, null);
        LayoutCalibrator calibrator = new LayoutCalibrator(new LayoutCache(work.resolve("layouts")), Duration.ofSeconds(4));
        long start = System.nanoTime();
        CalibrationException e = assertThrows(CalibrationException.class, () -> calibrator.calibrate(library));
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(e.getMessage().contains("ran past its 4 s limit and was killed"), e.getMessage());
        assertTrue(seconds < 15, "returned after " + seconds + " s");
        assertEquals(1, ConstructorLibrary.records(marker).size(), "the child ran the constructor, then slept");
        assertNothingOfTheChildLeft(); // the sleeping child was killed, with its helper
    }

    @Test
    void aForgedAnswerIsCheckedLikeAnyOther() throws Exception {
        Path marker = newMarker();
        // Well-formed, but ggml_tensor.name would run 64 bytes past the struct: a BPF read of garbage.
        String forged = LayoutAnswer.write(LayoutAnswerTest.v050()).replace(" name=256", " name=336");
        Path library = ConstructorLibrary.build(work.resolve("libggml-base.so"), marker, 0, forged);
        CalibrationException e = assertThrows(CalibrationException.class,
                () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts"))).calibrate(library));
        assertTrue(e.getMessage().contains("calibrated ggml_tensor layout is implausible"), e.getMessage());
        // No layout entry; the library's own hash may be recorded (stat-DEV-INO.json: its bytes, not the answer).
        assertFalse(Files.exists(work.resolve("layouts")) && Files.list(work.resolve("layouts"))
                .anyMatch(file -> !file.getFileName().toString().startsWith("stat-")), "nothing cached");
    }

    @Test
    void aFifoInPlaceOfTheLibraryIsRefusedWithoutWaiting() throws Exception {
        Path fifo = work.resolve("libggml-base.so");
        LibC.mkfifo(fifo.toString(), 0644);
        long start = System.nanoTime();
        CalibrationException e = assertThrows(CalibrationException.class,
                () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts"))).calibrate(fifo));
        assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "no hang on the FIFO");
    }

    @Test
    void aMappedLibraryIsOpenedAsMappedEvenAfterItsPathWasSwapped() throws Exception {
        Path marker = newMarker();
        Path directory = work.resolve("lib");
        Files.createDirectories(directory);
        Path library = ConstructorLibrary.build(directory.resolve("libggml-base.so"), marker, 0, null);
        long mappedInode = (Long) Files.getAttribute(library, "unix:ino");
        Process target = new ProcessBuilder("sleep", "60").start();
        Process holder = new ProcessBuilder("env", "LD_PRELOAD=" + library, "sleep", "60").start();
        try {
            awaitMapped(holder.pid(), library);
            // The path now names another file (a rename, as a hostile target could do between two looks).
            Path other = directory.resolve("other.so");
            Files.writeString(other, "not the mapped library");
            Files.move(other, library, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            try (LibraryFile file = LibraryFile.open(library, OptionalInt.of((int) holder.pid()))) {
                assertEquals(mappedInode, (Long) Files.getAttribute(file.procPath(), "unix:ino"), "the mapped file");
            }
            try (LibraryFile file = LibraryFile.open(library, OptionalInt.of((int) target.pid()))) {
                assertTrue(mappedInode != (Long) Files.getAttribute(file.procPath(), "unix:ino"),
                        "a process that does not map it: the path");
            }
        } finally {
            holder.destroyForcibly();
            target.destroyForcibly();
        }
    }

    /**
     * The library's code in the child tries what leads beyond its uid. A key in the session keyring root's
     * shell gave infertop (here this test's calibrating thread's, which the child used to inherit: the library
     * read root's secret) cannot be read; keyctl, add_key, request_key, a user namespace (unshare, clone),
     * io_uring, bpf, perf_event_open and userfaultfd are refused (EPERM); it runs under RLIMIT_NPROC and
     * RLIMIT_NOFILE, and in a cgroup of its own where the cgroup hierarchies can be written.
     */
    @Test
    void theChildReadsNoKeyOfRootsAndIsRefusedWhatLeadsBeyondItsUid() throws Exception {
        Path marker = newMarker();
        Path library = work.resolve("libggml-base.so");
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        Thread calibrating = new Thread(() -> {
            try {
                long serial = Keyrings.plantInNewSession("infertop-test-root-session", "infertop-test-secret",
                        "root-secret-42");
                ConstructorLibrary.buildProbing(library, marker, serial, 0);
                assertThrows(CalibrationException.class,
                        () -> new LayoutCalibrator(new LayoutCache(work.resolve("layouts"))).calibrate(library));
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        calibrating.start();
        calibrating.join(120_000);
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        List<Map<String, String>> probes = ConstructorLibrary.records(marker).stream()
                .filter(r -> r.containsKey("confinement")).toList();
        assertEquals(1, probes.size(), "the library's code ran once, in the child: " + ConstructorLibrary.records(marker));
        Map<String, String> child = probes.getFirst();
        String line = child.get("line");
        System.out.println("calibration child: " + line);
        assertEquals("", child.get("secret"), "root's secret out of reach: " + line);
        assertEquals("1", child.get("key_read_errno"), "keyctl refused (EPERM): " + line);
        for (String call : List.of("add_key", "request_key", "unshare_user", "clone_user", "io_uring", "bpf",
                "perf_event_open", "userfaultfd")) {
            assertEquals("1", child.get(call), call + " refused (EPERM): " + line);
        }
        assertEquals("1024", child.get("nofile"), line);
        long nproc = Long.parseLong(child.get("nproc"));
        assertTrue(nproc > 0 && nproc < 1_000_000, "RLIMIT_NPROC set: " + line);
        if (cgroupsWritable()) {
            assertEquals("1", child.get("own_cgroup"), "in a cgroup of its own: " + line);
        }
        assertNothingOfTheChildLeft();
    }

    /**
     * Another process of the child's uid (the target's user) can neither ptrace the child nor open its
     * /proc/PID/environ while the library's code runs there: the child's java is execute-only for it, so the
     * kernel keeps the child non-dumpable after its execve (a dumpable child was attached and read before).
     */
    @Test
    void noOtherProcessOfTheChildsUidCanPtraceIt() throws Exception {
        Path marker = newMarker();
        Path library = ConstructorLibrary.build(work.resolve("libggml-base.so"), marker, 10, null);
        Path attach = shared.resolve("attach");
        Files.writeString(shared.resolve("attach.c"), """
                #include <errno.h>
                #include <fcntl.h>
                #include <stdio.h>
                #include <stdlib.h>
                #include <sys/ptrace.h>
                #include <sys/wait.h>
                #include <unistd.h>
                int main(int argc, char **argv) {
                    pid_t pid = atoi(argv[1]);
                    char path[64];
                    snprintf(path, sizeof path, "/proc/%d/environ", (int) pid);
                    int fd = open(path, O_RDONLY);
                    int environ_errno = fd < 0 ? errno : 0;
                    long attached = ptrace(PTRACE_ATTACH, pid, 0, 0);
                    int attach_errno = attached < 0 ? errno : 0;
                    if (attached == 0) {
                        waitpid(pid, NULL, __WALL);
                        ptrace(PTRACE_DETACH, pid, 0, 0);
                    }
                    printf("environ=%d attach=%d\\n", environ_errno, attach_errno);
                    return 0;
                }
                """);
        Process cc = new ProcessBuilder("cc", "-O1", "-o", attach.toString(), shared.resolve("attach.c").toString())
                .redirectErrorStream(true).start();
        assertEquals(0, cc.waitFor(), new String(cc.getInputStream().readAllBytes()));
        Files.setPosixFilePermissions(attach, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Process target = new ProcessBuilder("setpriv", "--reuid=4321", "--regid=4322", "--clear-groups", "sleep", "60")
                .start();
        Thread calibrating = null;
        try {
            awaitUid(target.pid(), "4321");
            calibrating = new Thread(() -> assertThrows(Throwable.class, () -> new LayoutCalibrator(
                    new LayoutCache(work.resolve("layouts"))).calibrate(library, OptionalInt.of((int) target.pid()))));
            calibrating.start();
            long child = -1;
            for (int i = 0; i < 400 && (child < 0 || ConstructorLibrary.records(marker).isEmpty()); i++) {
                child = javaOfUid("4321");
                Thread.sleep(50);
            }
            assertTrue(child > 0 && !ConstructorLibrary.records(marker).isEmpty(),
                    "the child runs the library's code as uid 4321");
            Process attacker = new ProcessBuilder("setpriv", "--reuid=4321", "--regid=4322", "--clear-groups",
                    attach.toString(), Long.toString(child)).redirectErrorStream(true).start();
            String result = new String(attacker.getInputStream().readAllBytes()).strip();
            attacker.waitFor();
            System.out.println("uid 4321 against the calibration child " + child + ": " + result);
            assertEquals("environ=13 attach=1", result, "EACCES and EPERM for the child's own uid");
        } finally {
            target.destroyForcibly();
            if (calibrating != null) {
                calibrating.join(60_000);
            }
        }
    }

    /** Whether a cgroup can be made here (a container's /sys/fs/cgroup may be read-only). */
    private static boolean cgroupsWritable() {
        for (String hierarchy : List.of("/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids", "/sys/fs/cgroup")) {
            Path probe = Path.of(hierarchy, "infertop-test-probe-" + ProcessHandle.current().pid());
            try {
                Files.createDirectory(probe);
                Files.delete(probe);
                return true;
            } catch (java.io.IOException | RuntimeException e) {
                // not this one
            }
        }
        return false;
    }

    /** A java process of that uid (the calibration child, seen from the host), or -1. */
    private static long javaOfUid(String uid) {
        for (ProcessHandle process : ProcessHandle.allProcesses().toList()) {
            try {
                Path proc = Path.of("/proc/" + process.pid());
                if (Files.readSymbolicLink(proc.resolve("exe")).toString().endsWith("/bin/java")) {
                    for (String line : Files.readAllLines(proc.resolve("status"))) {
                        if (line.startsWith("Uid:") && line.substring(4).strip().startsWith(uid + "\t")) {
                            return process.pid();
                        }
                    }
                }
            } catch (java.io.IOException | RuntimeException e) {
                // gone, or not a process to look at
            }
        }
        return -1;
    }

    private static void awaitUid(long pid, String uid) throws Exception {
        for (int i = 0; i < 100; i++) {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("Uid:") && line.substring(4).strip().startsWith(uid)) {
                    return;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("process " + pid + " never ran as uid " + uid);
    }

    private static void awaitMapped(long pid, Path library) throws Exception {
        for (int i = 0; i < 100; i++) {
            if (Files.readString(Path.of("/proc/" + pid + "/maps")).contains(library.toString())) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(library + " never mapped by " + pid);
    }
}
