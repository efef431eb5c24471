package dev.infertop.process.layout;

import dev.infertop.ffi.OwnPriority;
import dev.infertop.process.DynamicInfo;
import dev.infertop.process.ElfFile;
import dev.infertop.process.TargetException;
import dev.infertop.process.TreeCgroup;
import dev.infertop.process.AttachPatience;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Runs {@link CalibrationChild} on one library: a short-lived JVM that is never root, started by
 * {@link SandboxHelper} in the target's own root and mount namespace (a private copy of it), as
 * {@link ChildCredentials} (the target's user, or nobody): PID 1 of its own PID namespace (whatever it starts dies
 * with it), no network, a new session without a terminal, supplementary groups cleared, no_new_privs, no
 * capabilities, a fresh session keyring of its own, not dumpable (its java is attached execute-only), limits on
 * CPU time, file size, address space, open files and threads, a cgroup of its own beside the target's with
 * {@link #CHILD_TASKS} tasks and {@link #CHILD_MEMORY_BYTES} of memory at most (where a cgroup hierarchy can be
 * written), a seccomp filter refusing terminal input pushes, ptrace, the keyring calls, new namespaces, bpf,
 * perf_event_open, userfaultfd and io_uring (native/tools/confine.h), an environment of LD_LIBRARY_PATH alone,
 * SIGKILL if infertop dies, and a wall-clock limit after which it is killed. It sees the library only as its stdin (the file {@link LibraryFile}
 * opened and checked), the libraries it needs as binds of files infertop opened and checked
 * ({@link ChildLibraries}), and its classpath is a fresh root-owned copy of the few infertop classes it runs,
 * attached read-only (infertop's own jar may sit in a directory only root can enter). Only its stdout comes back,
 * bounded, for {@link LayoutAnswer} to parse and check.
 *
 * <p>When any of this cannot be had (no user switch, no namespaces), calibration fails with the reason: the
 * caller reports the operator layer unavailable. There is no fallback that runs the library as root.
 */
final class CalibrationSandbox {
    private CalibrationSandbox() {}

    /** Wall-clock limit for the child: JVM start (~0.5 s) plus calibration, on a machine llama.cpp keeps busy. */
    static final Duration TIME_LIMIT = Duration.ofSeconds(30);
    /** The child's cgroup limits: tasks (the JVM's threads, ggml's pool, the helper) and memory. */
    static final long CHILD_TASKS = 512;
    static final long CHILD_MEMORY_BYTES = 1L << 30;
    private static final java.util.concurrent.atomic.AtomicLong RUNS = new java.util.concurrent.atomic.AtomicLong();
    /** What of the child's stderr is kept for a message. */
    static final int MAX_STDERR_BYTES = 4096;
    /** How long the output readers may take after the child ended (a grandchild may hold the pipes). */
    private static final long READER_GRACE_MS = 2000;

    /** The packages the child loads classes from (the layout code and the /proc/PID/maps reader it uses). */
    private static final List<String> CHILD_PACKAGES = List.of("dev/infertop/process/layout/", "dev/infertop/process/",
            "dev/infertop/model/");
    /** Of {@code dev/infertop/model/}, only the sanitiser the op table uses: the child gets no more than it runs. */
    private static final String CHILD_MODEL_CLASS = "SafeText";
    /** The run's directory: root's alone (the child sees only the classes, attached in its sandbox). */
    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> DIRECTORY = PosixFilePermissions.fromString("rwxr-xr-x");
    private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-r--r--");

    /**
     * The JVM options of the child: small and quick to start; no attach socket, no perf file, no core dump; its
     * reservations (class space, code cache) kept well inside the sandbox's address-space limit.
     */
    static final List<String> JVM_OPTIONS = List.of(
            "--enable-native-access=ALL-UNNAMED",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-XX:CICompilerCount=1",
            "-XX:-UsePerfData",
            "-XX:+DisableAttachMechanism",
            "-XX:-CreateCoredumpOnCrash",
            "-XX:ErrorFile=/dev/null",
            "-XX:CompressedClassSpaceSize=64m",
            "-XX:ReservedCodeCacheSize=32m",
            "-Xshare:auto",
            "-Xms8m",
            "-Xmx64m");

    /** The child's answer text (stdout), or why there is none; no target process (the child runs as nobody). */
    static String run(LibraryFile library, ChildCredentials credentials, Duration limit) throws CalibrationException {
        return run(library, credentials, limit, List.of(), List.of(), OptionalInt.empty());
    }

    /**
     * Runs the child on the library of process {@code targetPid} (none: a command not started yet, a file; the
     * child then runs in infertop's own root and namespaces) with arguments for the child (its mode) and the
     * libraries it needs ({@link ChildLibraries}), found first on its LD_LIBRARY_PATH.
     */
    static String run(LibraryFile library, ChildCredentials credentials, Duration limit, List<String> childArguments,
                      List<SandboxHelper.Bind> binds, OptionalInt targetPid) throws CalibrationException {
        boolean otherRoot = targetPid.isPresent() && SandboxHelper.isOtherRoot(targetPid.getAsInt());
        long sandboxPid = targetPid.isPresent() ? targetPid.getAsInt() : ProcessHandle.current().pid();
        Path directory = null;
        Process child = null;
        TreeCgroup cgroup = null;
        try {
            long sandboxStart = SandboxHelper.startTime(sandboxPid); // the process, not whichever has its pid later
            directory = Files.createTempDirectory("infertop-calibrate-", PosixFilePermissions.asFileAttribute(PRIVATE));
            Path classes = directory.resolve("classes");
            copyChildClasses(classes);
            List<String> searchPath = new ArrayList<>();
            if (!binds.isEmpty()) {
                SandboxHelper.addEntry(searchPath, SandboxHelper.LIBS_PLACEHOLDER);
            }
            if (otherRoot) {
                SandboxHelper.targetSearchPath(library.shownAs(), targetPid.getAsInt())
                        .forEach(entry -> SandboxHelper.addEntry(searchPath, entry));
            } else {
                for (String entry : originSearchPath(library).split(":")) {
                    SandboxHelper.addEntry(searchPath, entry);
                }
            }
            List<String> javaArguments = new ArrayList<>(JVM_OPTIONS);
            javaArguments.addAll(List.of("-cp", SandboxHelper.CLASSES_PLACEHOLDER, CalibrationChild.class.getName()));
            javaArguments.addAll(childArguments);
            // Beside the target, under whatever limits its own cgroup has (a container's, a systemd unit's).
            cgroup = TreeCgroup.create(sandboxPid, "infertop-calibration-"
                    + ProcessHandle.current().pid() + "-" + RUNS.incrementAndGet(), CHILD_TASKS, CHILD_MEMORY_BYTES);
            ProcessBuilder builder = new ProcessBuilder(SandboxHelper.command(directory, sandboxPid, sandboxStart,
                    credentials, classes, binds, searchPath, cgroup.procsFiles(), javaArguments))
                    .directory(directory.toFile())
                    .redirectInput(library.procPath().toFile());
            builder.environment().clear();
            child = OwnPriority.start(builder); // the target's code: never at infertop's start boost
            BoundedReader stdout = BoundedReader.start(child.getInputStream(), LayoutAnswer.MAX_BYTES + 1);
            BoundedReader stderr = BoundedReader.start(child.getErrorStream(), MAX_STDERR_BYTES);
            if (!child.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                child.destroyForcibly(); // the helper: its child, PID 1 of the sandbox, dies with it, and all it started
                throw CalibrationException.of(library.shownAs(), "the calibration child (as " + credentials.description()
                        + where(otherRoot) + ") ran past its " + limit.toSeconds() + " s limit and was killed"
                        + AttachPatience.HINT);
            }
            String answer = stdout.text();
            if (child.exitValue() == 0 || answer.startsWith(LayoutAnswer.ERROR)) {
                return answer;
            }
            throw CalibrationException.of(library.shownAs(), "the calibration child (as " + credentials.description()
                    + where(otherRoot) + ") failed with exit status " + child.exitValue() + ": "
                    + LayoutAnswer.printable(firstLine(stderr.text())));
        } catch (IOException | UncheckedIOException e) {
            throw CalibrationException.of(library.shownAs(), "cannot start the calibration child: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw CalibrationException.of(library.shownAs(), "interrupted while the calibration child ran");
        } finally {
            if (child != null && child.isAlive()) {
                child.destroyForcibly();
            }
            if (cgroup != null) {
                cgroup.close();
            }
            deleteQuietly(directory);
        }
    }

    /**
     * The library's RUNPATH (or RPATH) entries that use $ORIGIN, with its directory put in: in the child the
     * library is /proc/self/fd/0, whose $ORIGIN would be /proc/self/fd, so the siblings it needs (in the
     * prebuilt npm builds, RUNPATH $ORIGIN) are found through LD_LIBRARY_PATH instead; the child, as an
     * unprivileged user, reads them by path like the target does. Empty when there is none.
     */
    static String originSearchPath(LibraryFile library) {
        Path directory = library.shownAs().toAbsolutePath().getParent();
        if (directory == null) {
            return "";
        }
        DynamicInfo dynamic;
        try (ElfFile elf = ElfFile.open(library.procPath())) {
            dynamic = elf.dynamic();
        } catch (TargetException e) {
            return "";
        }
        List<String> entries = new ArrayList<>();
        for (String entry : dynamic.hasRunpath() ? dynamic.runpath() : dynamic.rpath()) {
            if (entry.contains("$ORIGIN") || entry.contains("${ORIGIN}")) {
                String expanded = entry.replace("${ORIGIN}", directory.toString()).replace("$ORIGIN", directory.toString());
                if (!expanded.contains(":") && !expanded.contains("$") && expanded.chars().allMatch(c -> c >= 0x20 && c != 0x7f)) {
                    entries.add(expanded);
                }
            }
        }
        return String.join(":", entries);
    }

    private static String where(boolean otherRoot) {
        return otherRoot ? ", in the target's own root" : "";
    }

    private static String firstLine(String text) {
        return text.lines().filter(l -> !l.isBlank()).findFirst().orElse("(nothing on stderr)");
    }

    /**
     * Copies the class files of {@link #CHILD_PACKAGES} from wherever infertop's classes are (its jar, or a
     * classes directory when tests run) into {@code classes}, readable by all, writable by root only.
     */
    static void copyChildClasses(Path classes) throws IOException {
        Path source;
        try {
            source = Path.of(CalibrationChild.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | RuntimeException e) {
            throw new IOException("cannot tell where infertop's classes are: " + e);
        }
        for (String pkg : CHILD_PACKAGES) {
            Files.createDirectories(classes.resolve(pkg));
        }
        try (Stream<Path> tree = Files.walk(classes)) {
            for (Path directory : tree.toList()) {
                Files.setPosixFilePermissions(directory, DIRECTORY);
            }
        }
        if (Files.isDirectory(source)) {
            for (String pkg : CHILD_PACKAGES) {
                try (Stream<Path> files = Files.list(source.resolve(pkg))) {
                    for (Path file : files.filter(f -> isChildClass(pkg, f.getFileName().toString())).toList()) {
                        copy(Files.newInputStream(file), classes.resolve(pkg).resolve(file.getFileName().toString()));
                    }
                }
            }
            return;
        }
        try (JarFile jar = new JarFile(source.toFile())) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                String name = entry.getName();
                for (String pkg : CHILD_PACKAGES) {
                    String rest = name.startsWith(pkg) ? name.substring(pkg.length()) : "";
                    if (name.startsWith(pkg) && !rest.contains("/") && isChildClass(pkg, rest)) {
                        copy(jar.getInputStream(entry), classes.resolve(name));
                    }
                }
            }
        }
    }

    private static boolean isChildClass(String pkg, String fileName) {
        if (!fileName.endsWith(".class")) {
            return false;
        }
        return !pkg.equals("dev/infertop/model/") || fileName.equals(CHILD_MODEL_CLASS + ".class")
                || fileName.startsWith(CHILD_MODEL_CLASS + "$");
    }

    private static void copy(InputStream in, Path to) throws IOException {
        try (in) {
            Files.copy(in, to);
        }
        Files.setPosixFilePermissions(to, FILE);
    }

    private static void deleteQuietly(Path directory) {
        if (directory == null) {
            return;
        }
        try (Stream<Path> tree = Files.walk(directory)) {
            for (Path path : tree.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            // a leftover temp directory of class files is harmless; the next run makes a fresh one
        }
    }

    /** Reads a stream to its end on a virtual thread, keeping the first {@code maxBytes}. */
    private static final class BoundedReader {
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private final InputStream in;
        private final Thread thread;

        private BoundedReader(InputStream in, int maxBytes) {
            this.in = in;
            this.thread = Thread.ofVirtual().start(() -> drain(maxBytes));
        }

        static BoundedReader start(InputStream in, int maxBytes) {
            return new BoundedReader(in, maxBytes);
        }

        private void drain(int maxBytes) {
            byte[] buffer = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    synchronized (kept) {
                        kept.write(buffer, 0, Math.max(0, Math.min(n, maxBytes - kept.size())));
                    }
                }
            } catch (IOException e) {
                // closed below, after the grace period: what was read is kept
            }
        }

        /** What was read, once the stream ended or the grace period passed (then the stream is closed). */
        String text() throws InterruptedException {
            if (!thread.join(Duration.ofMillis(READER_GRACE_MS))) {
                try {
                    in.close();
                } catch (IOException ignored) {
                    // the reader ends either way
                }
            }
            synchronized (kept) {
                return kept.toString(StandardCharsets.ISO_8859_1);
            }
        }
    }
}
