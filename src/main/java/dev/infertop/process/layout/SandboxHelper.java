package dev.infertop.process.layout;

import dev.infertop.process.DeadlineReads;
import dev.infertop.process.NativeTool;
import dev.infertop.process.TargetRoot;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How the calibration child is started: through {@code enter-target-root} (native/tools/enter-target-root.c),
 * which infertop runs as root. It enters a private copy of the target's mount namespace and chroots into the
 * target's root — infertop's own for most targets, a container's image or a chroot for others, whose libraries
 * are then loaded by the target's own loader and libc — attaches the host's JDK, the child's classes and the
 * libraries the child needs there, read-only, and starts the child as PID 1 of its own PID namespace (nothing it
 * starts outlives it), without network, in a new session with no terminal, with no privileges, under limits and
 * a seccomp filter. Nothing of the target's is copied: a library reaches the child as a bind of the very file
 * infertop opened and checked ({@code /proc/INFERTOP/fd/N}), readable to the child only if the file's own mode
 * lets its user read it. The helper is given the process as its pid and start time, and holds it by a pidfd: a pid
 * reused by another process never sends it into that process's root. Working as root in a tree the target may own,
 * it resolves one directory there, once, without links, and works on descriptors (the new mount API, openat2,
 * mount_setattr: Linux 5.12); on an older kernel it refuses, and the operator layer is unavailable with its reason.
 */
final class SandboxHelper {
    private SandboxHelper() {}

    static final String CLASSES_PLACEHOLDER = "@CLASSES@";
    /** Where the bound libraries are, in the child's view. */
    static final String LIBS_PLACEHOLDER = "@LIBS@";
    private static final String PROGRAM = "enter-target-root";

    /** A file the child gets as {@code LIBS/name}: the open file {@code source} names. */
    record Bind(Path source, String name) {}

    /** Whether the process's root directory is not infertop's (device or inode differ); false when unknown. */
    static boolean isOtherRoot(int pid) {
        try {
            Object theirs = Files.getAttribute(TargetRoot.of(pid).directory(), "unix:ino");
            Object theirDevice = Files.getAttribute(TargetRoot.of(pid).directory(), "unix:dev");
            Object ours = Files.getAttribute(Path.of("/"), "unix:ino");
            Object ourDevice = Files.getAttribute(Path.of("/"), "unix:dev");
            return !theirs.equals(ours) || !theirDevice.equals(ourDevice);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * When process {@code pid} started (clock ticks after boot, field 22 of /proc/PID/stat): with the pid, what
     * names that process and no other, so that the helper refuses a pid reused meanwhile.
     */
    static long startTime(long pid) throws IOException {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.ISO_8859_1);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("process " + pid + " is gone");
        }
        // after the command name, whatever it holds: the last ')'; then state is field 3
        String[] fields = stat.substring(stat.lastIndexOf(')') + 1).strip().split(" ");
        try {
            return Long.parseLong(fields[22 - 3]);
        } catch (RuntimeException e) {
            throw new IOException("cannot read the start time in /proc/" + pid + "/stat");
        }
    }

    /**
     * The command that starts the child in {@code pid}'s root and namespaces (infertop's own pid when there is no
     * target), refused unless that process started at {@code startTime} ({@link #startTime}): the helper
     * (extracted into {@code directory}), then the JVM arguments, where {@link #CLASSES_PLACEHOLDER} stands for the
     * classes directory as attached there; {@code searchPath} becomes the child's LD_LIBRARY_PATH and may name
     * {@link #LIBS_PLACEHOLDER}; the helper joins each of {@code cgroupProcs} before it forks the child.
     */
    static List<String> command(Path directory, long pid, long startTime, ChildCredentials credentials, Path classes,
                                List<Bind> binds, List<String> searchPath, List<Path> cgroupProcs,
                                List<String> javaArguments) throws IOException {
        Path helper;
        try {
            helper = NativeTool.extract(SandboxHelper.class, PROGRAM, directory);
        } catch (IOException e) {
            throw new IOException(e.getMessage() + ", and the target's library runs only in its sandbox");
        }
        List<String> command = new ArrayList<>(List.of(helper.toString(), Long.toString(pid),
                Integer.toString(credentials.uid()), Integer.toString(credentials.gid()),
                executeOnlyJavaHome(directory).toString(), classes.toString(), "-s", Long.toString(startTime)));
        if (!searchPath.isEmpty()) {
            command.addAll(List.of("-e", "LD_LIBRARY_PATH=" + String.join(":", searchPath)));
        }
        for (Path procs : cgroupProcs) {
            command.addAll(List.of("-c", procs.toString()));
        }
        for (Bind bind : binds) {
            command.addAll(List.of("-b", bind.source().toString(), bind.name()));
        }
        command.add("--");
        command.addAll(javaArguments);
        return command;
    }

    /**
     * A JAVA_HOME for the child whose bin/java is infertop's copy of the launcher, mode 0711: a program its user
     * may run but not read is one the kernel keeps non-dumpable after the execve (as it does a setuid one), so no
     * other process of that uid can ptrace the child or open its /proc/PID/mem. lib and conf are links to this
     * JDK's own, followed by the helper on the host's side.
     */
    static Path executeOnlyJavaHome(Path directory) throws IOException {
        Path real = Path.of(System.getProperty("java.home"));
        Path home = Files.createDirectories(directory.resolve("jdk/bin")).getParent();
        Path java = home.resolve("bin/java");
        Files.copy(real.resolve("bin/java"), java, StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("--x--x--x"));
        Files.createSymbolicLink(home.resolve("lib"), real.resolve("lib"));
        if (Files.isDirectory(real.resolve("conf"))) {
            Files.createSymbolicLink(home.resolve("conf"), real.resolve("conf"));
        }
        return home;
    }

    /**
     * For a target in another root, where the child's loader looks first, as the target sees its files: the
     * library's own directory (the child loads it as /proc/self/fd/0, whose $ORIGIN is no directory of the
     * target's) and the target's own LD_LIBRARY_PATH (Ollama's private lib directory), each entry absolute,
     * printable and without ':'.
     */
    static List<String> targetSearchPath(Path libraryAsMapped, int pid) {
        List<String> entries = new ArrayList<>();
        Path directory = Path.of(TargetRoot.targetPath(libraryAsMapped.toString())).getParent();
        if (directory != null) {
            addEntry(entries, directory.toString());
        }
        targetLibraryPath(pid).ifPresent(value -> {
            for (String entry : value.split(":")) {
                addEntry(entries, entry);
            }
        });
        return entries;
    }

    static void addEntry(List<String> entries, String entry) {
        if (entries.size() < 32 && (entry.startsWith("/") || entry.equals(LIBS_PLACEHOLDER)) && entry.length() < 1024
                && !entry.contains(":") && entry.chars().allMatch(c -> c > 0x20 && c < 0x7f) && !entries.contains(entry)) {
            entries.add(entry);
        }
    }

    /** LD_LIBRARY_PATH from /proc/PID/environ (the environment the target started with), bounded. */
    static Optional<String> targetLibraryPath(int pid) {
        // The kernel reads the environment from the target's memory, which the target may back with a file
        // that never answers: on the reader thread with a deadline.
        byte[] environ = DeadlineReads.TARGET.read("reading /proc/" + pid + "/environ", () -> {
            try (InputStream in = Files.newInputStream(Path.of("/proc", Integer.toString(pid), "environ"))) {
                return in.readNBytes(1 << 20);
            } catch (IOException e) {
                return null;
            }
        }, null);
        if (environ == null) {
            return Optional.empty();
        }
        String prefix = "LD_LIBRARY_PATH=";
        int start = 0;
        for (int i = 0; i <= environ.length; i++) {
            if (i == environ.length || environ[i] == 0) {
                String entry = new String(environ, start, i - start, StandardCharsets.ISO_8859_1);
                if (entry.startsWith(prefix)) {
                    return Optional.of(entry.substring(prefix.length()));
                }
                start = i + 1;
            }
        }
        return Optional.empty();
    }

}
