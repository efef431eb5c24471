package dev.infertop.target.layout;

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
        TestRequirements.requireOrSkip(LibC.geteuid() == 0, "the calibration child is started as root (setpriv "
                + "--reuid): run the tests as root");
        TestRequirements.requireOrSkip(Files.isExecutable(Path.of("/usr/bin/setpriv")), "needs setpriv (util-linux)");
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
        assertFalse(Files.exists(Path.of("/proc/" + child.get("pid"))), "the child is gone");
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
        String pid = ConstructorLibrary.records(marker).getFirst().get("pid");
        for (int i = 0; i < 50 && Files.exists(Path.of("/proc/" + pid)); i++) {
            Thread.sleep(100);
        }
        assertFalse(Files.exists(Path.of("/proc/" + pid)), "the sleeping child " + pid + " was killed");
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
