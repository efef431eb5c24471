package dev.infertop.process.layout;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibC;
import dev.infertop.process.MemoryMapping;
import dev.infertop.process.ProcessMaps;
import dev.infertop.process.TargetException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The target's libggml-base, opened once by the root process and then only referred to by that open file: its
 * build-id is read through it and the calibration child gets it as its stdin, so a path the target can write
 * (rename, symlink, FIFO) cannot make either look at another file than the one checked here.
 *
 * <p>When the target has the library mapped, it is opened through {@code /proc/PID/map_files/START-END} (the
 * file the kernel mapped, whatever its path names now) and must be the mapping's device and inode. It is
 * opened with O_NONBLOCK (a FIFO swapped in for it cannot hang the open) and must be a regular file.
 */
final class LibraryFile implements AutoCloseable {
    private static final Linker LINKER = Linker.nativeLinker();
    // open(2): int open(const char *pathname, int flags) — called without the variadic mode (no O_CREAT).
    // Bound here rather than in LibC: only this class needs an open that never blocks.
    private static final MethodHandle OPEN = LINKER.downcallHandle(LINKER.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Errno.CAPTURE);
    private static final int O_RDONLY = 0;
    private static final int O_NOCTTY = 0x100;
    private static final int O_NONBLOCK = 0x800;
    private static final int O_CLOEXEC = 0x80000;
    private static final int S_IFMT = 0xf000;
    private static final int S_IFREG = 0x8000;

    private final Path shownAs;
    private final int fd;
    private boolean closed;

    private LibraryFile(Path shownAs, int fd) {
        this.shownAs = shownAs;
        this.fd = fd;
    }

    /**
     * Opens {@code library} as {@code targetPid} maps it (through map_files) or, when that process does not map
     * it (a launched command not started yet) or none is given, by its path.
     */
    static LibraryFile open(Path library, OptionalInt targetPid) throws CalibrationException {
        Optional<MemoryMapping> mapping = targetPid.isPresent() ? mappingOf(library, targetPid.getAsInt())
                : Optional.empty();
        String source = mapping.map(m -> "/proc/" + targetPid.getAsInt() + "/map_files/"
                + Long.toHexString(m.start()) + "-" + Long.toHexString(m.end())).orElse(library.toString());
        int fd;
        try {
            fd = openNonBlocking(library, source);
        } catch (CalibrationException e) {
            if (mapping.isEmpty()) {
                throw e;
            }
            // map_files needs CAP_SYS_ADMIN: without it, the path, held to the mapping's inode just below.
            fd = openNonBlocking(library, library.toString());
        }
        LibraryFile file = new LibraryFile(library, fd);
        try {
            Map<String, Object> attributes = Files.readAttributes(file.procPath(), "unix:mode,dev,ino");
            int mode = (Integer) attributes.get("mode");
            if ((mode & S_IFMT) != S_IFREG) {
                throw CalibrationException.of(library, "it is not a regular file (mode 0"
                        + Integer.toOctalString(mode) + ")");
            }
            if (mapping.isPresent()) {
                long device = (Long) attributes.get("dev");
                long inode = (Long) attributes.get("ino");
                String mappedDevice = mapping.get().device();
                if (inode != mapping.get().inode() || !MemoryMapping.deviceAsMapsPrintsIt(device).equals(mappedDevice)) {
                    throw CalibrationException.of(library, "the file opened (" + MemoryMapping.deviceAsMapsPrintsIt(device) + " inode " + inode
                            + ") is not the one the process maps (" + mappedDevice + " inode "
                            + mapping.get().inode() + ")");
                }
            }
            return file;
        } catch (IOException | RuntimeException e) {
            file.close();
            throw CalibrationException.of(library, "cannot stat it: " + e.getMessage());
        } catch (CalibrationException e) {
            file.close();
            throw e;
        }
    }

    /**
     * The process's mapping of {@code library}, if it maps that path: one of the file now at that path if there
     * is one, else one of a file deleted or replaced since (map_files still opens that one: what the process runs).
     */
    private static Optional<MemoryMapping> mappingOf(Path library, int pid) throws CalibrationException {
        try {
            return ProcessMaps.of(pid).mappings().stream()
                    .filter(m -> m.isFileBacked() && m.path().equals(library.toString()))
                    .min(java.util.Comparator.comparing(MemoryMapping::deleted));
        } catch (TargetException e) {
            throw CalibrationException.of(library, e.getMessage());
        }
    }

    /**
     * The file {@code source} names, looked at through an O_PATH descriptor first (which opens nothing): only a
     * regular file is opened, through that descriptor's /proc link, so a device or FIFO swapped in is never opened.
     */
    private static int openNonBlocking(Path library, String source) throws CalibrationException {
        int named;
        try {
            named = LibC.openPathOnly(source, true);
        } catch (IOException e) {
            throw CalibrationException.of(library, "cannot open " + source + ": " + e.getMessage());
        }
        try {
            int mode = LibC.statx(named).mode();
            if ((mode & S_IFMT) != S_IFREG) {
                throw CalibrationException.of(library, "it is not a regular file (mode 0" + Integer.toOctalString(mode)
                        + ")");
            }
            return openRegular(library, "/proc/self/fd/" + named);
        } catch (IOException e) {
            throw CalibrationException.of(library, "cannot stat " + source + ": " + e.getMessage());
        } finally {
            LibC.closeQuietly(named);
        }
    }

    private static int openRegular(Path library, String source) throws CalibrationException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocate(arena);
            int fd = (int) OPEN.invokeExact(errno, arena.allocateFrom(source), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            if (fd < 0) {
                throw CalibrationException.of(library, "cannot open " + source + ": " + LibC.strerror(Errno.read(errno)));
            }
            return fd;
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw CalibrationException.of(library, "open(" + source + ") failed: " + t);
        }
    }

    /** The path the user knows the library by (for messages and the cache entry). */
    Path shownAs() {
        return shownAs;
    }

    /** This process's name for the open file: reading it reads that file, whatever happened to its path since. */
    Path procPath() {
        return Path.of("/proc/self/fd/" + fd);
    }

    /**
     * Another process's name for the open file, {@code /proc/INFERTOP_PID/fd/N}: the sandbox helper (root) binds
     * exactly this file for the child while infertop keeps it open.
     */
    Path hostPath() {
        return Path.of("/proc/" + ProcessHandle.current().pid() + "/fd/" + fd);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            int ignored = (int) LibC.close$handle().invokeExact(fd);
        } catch (Throwable t) {
            // nothing to do: the descriptor is gone or was never valid
        }
    }
}
