package dev.infertop.process;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The memory mappings of a process, from /proc/PID/maps: which library files it has mapped, and where.
 *
 * <p>The target decides how long its maps are (every mmap adds a line, a path adds up to 4 KiB): at most
 * {@link #MAX_BYTES} bytes and {@link #MAX_LINES} lines are read, and {@link #truncated()} says when more was
 * there (libraries mapped beyond the cut are then not seen; {@link #truncationNote()} says so in one line).
 */
public final class ProcessMaps {
    /** 16 MiB: a llama.cpp process has a few hundred lines of ~100 bytes; the kernel's default map count limit
     *  (vm.max_map_count, 65530) times a typical line is ~7 MiB. */
    public static final int MAX_BYTES = 16 << 20;
    public static final int MAX_LINES = 262_144;

    private final String source;
    private final List<MemoryMapping> mappings;
    private final boolean truncated;

    private ProcessMaps(String source, List<MemoryMapping> mappings, boolean truncated) {
        this.source = source;
        this.mappings = List.copyOf(mappings);
        this.truncated = truncated;
    }

    /** Reads the maps of a running process. */
    public static ProcessMaps of(long pid) throws TargetException {
        return of(pid, read(pid));
    }

    /** The maps {@code bytes} read from process {@code pid} ({@link #read}), parsed. */
    public static ProcessMaps of(long pid, byte[] bytes) throws TargetException {
        Path file = Path.of("/proc", Long.toString(pid), "maps");
        boolean cut = bytes.length > MAX_BYTES;
        int length = bytes.length;
        if (cut) {
            length = MAX_BYTES;
            while (length > 0 && bytes[length - 1] != '\n') {
                length--; // the last whole line
            }
        }
        ProcessMaps maps = parse(file.toString(), new String(bytes, 0, length, java.nio.charset.StandardCharsets.UTF_8),
                cut);
        return maps.openableFrom(pid);
    }

    /**
     * The bytes of a running process's maps, {@link #MAX_BYTES} + 1 at most (one more says there was more): a
     * caller that looks again and again compares them with the last ones before parsing.
     */
    public static byte[] read(long pid) throws TargetException {
        Path file = Path.of("/proc", Long.toString(pid), "maps");
        byte[] bytes;
        // Not Files.readString: it starts with a 1-byte read when the size is 0, as procfs reports, and some
        // /proc files answer a read at a non-zero position with EOF.
        try (var in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw new TargetException("no such process: " + pid);
        } catch (AccessDeniedException e) {
            throw new TargetException("permission denied reading " + file + " (run as root or as the process owner)");
        } catch (IOException e) {
            // A process that exits while being read makes the read fail with ESRCH.
            if (!Files.exists(file.getParent())) {
                throw new TargetException("no such process: " + pid);
            }
            throw new TargetException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return bytes;
    }

    /**
     * These maps with each file's path made one infertop can open: the kernel prints a path as the target sees
     * it, and a target in another mount namespace (a container with an overlay root, a chroot in a private
     * namespace) sees files the host cannot reach by that path, or reaches another file by it (the host's own
     * libllama of the same name). A path is kept where it opens the mapped file (its device and inode);
     * otherwise the same path under {@code /proc/PID/root}, which resolves in the target's root and mount
     * namespace, where that opens the mapped file; otherwise it is kept, and every later open, held to the
     * mapping's device and inode, refuses it. Nothing is opened here: only stat, never following a FIFO's open.
     */
    ProcessMaps openableFrom(long pid) {
        Map<String, String> resolved = new java.util.HashMap<>();
        List<MemoryMapping> out = new ArrayList<>(mappings.size());
        for (MemoryMapping m : mappings) {
            m = m.withPid(pid);
            if (!m.isFileBacked() || m.deleted()) {
                out.add(m);
                continue;
            }
            String key = m.device() + " " + m.inode() + " " + m.path();
            MemoryMapping mapping = m;
            String path = resolved.computeIfAbsent(key, k -> openablePath(pid, mapping));
            if (!path.equals(m.path())) {
                m = new MemoryMapping(m.start(), m.end(), m.permissions(), m.fileOffset(), m.device(), m.inode(), path,
                        false, pid);
            }
            out.add(m);
        }
        return new ProcessMaps(source, out, truncated);
    }

    /**
     * Where infertop opens the file {@code m} maps (see {@link #openableFrom}). Under {@code /proc/PID/root} the
     * printed path is tried whole, then without its leading directories one by one: the kernel prints a file of a
     * mount that only the target's namespace has from the mount point's path on the host's side, so a chroot into
     * an overlay mounted at /tmp/x/merged prints /tmp/x/merged/usr/lib/..., which the target sees as /usr/lib/....
     * Last, {@code /proc/PID/map_files/START-END}, which opens the very file mapped there (root only).
     */
    static String openablePath(long pid, MemoryMapping m) {
        if (sameFile(m.path(), m)) {
            return m.path();
        }
        TargetRoot root = TargetRoot.of(pid);
        String suffix = m.path();
        for (int components = 0; components < MAX_PATH_COMPONENTS_TRIED && suffix.startsWith("/"); components++) {
            String inTargetRoot = root.hostPath(suffix);
            if (sameFile(inTargetRoot, m)) {
                return inTargetRoot;
            }
            int next = suffix.indexOf('/', 1);
            if (next < 0) {
                break;
            }
            suffix = suffix.substring(next);
        }
        String mapFile = "/proc/" + pid + "/map_files/" + Long.toHexString(m.start()) + "-" + Long.toHexString(m.end());
        return sameFile(mapFile, m) ? mapFile : m.path();
    }

    /** Leading directories dropped at most when looking for a file in the target's root (a path's depth). */
    private static final int MAX_PATH_COMPONENTS_TRIED = 64;

    private static boolean sameFile(String file, MemoryMapping m) {
        try {
            Path path = Path.of(file);
            long dev = ((Number) Files.getAttribute(path, "unix:dev")).longValue();
            long inode = ((Number) Files.getAttribute(path, "unix:ino")).longValue();
            return m.isFile(dev, inode);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException e) {
            return false;
        }
    }

    /** Parses maps text; {@code source} names where it came from in error messages. */
    public static ProcessMaps parse(String source, String text) throws TargetException {
        return parse(source, text, false);
    }

    private static ProcessMaps parse(String source, String text, boolean truncated) throws TargetException {
        List<MemoryMapping> mappings = new ArrayList<>();
        int lineNumber = 0;
        int from = 0;
        while (from < text.length()) {
            int newline = text.indexOf('\n', from);
            int end = newline < 0 ? text.length() : newline;
            if (lineNumber == MAX_LINES) {
                truncated = true;
                break;
            }
            lineNumber++;
            String line = text.substring(from, end);
            if (!line.isBlank()) {
                mappings.add(parseLine(source, lineNumber, line));
            }
            from = end + 1;
        }
        return new ProcessMaps(source, mappings, truncated);
    }

    /** Whether the maps were longer than {@link #MAX_BYTES} or {@link #MAX_LINES} and only their start was read. */
    public boolean truncated() {
        return truncated;
    }

    /** One line for the operator when {@link #truncated()}: what was cut and what that hides. */
    public String truncationNote() {
        return "infertop: " + source + " is longer than " + (MAX_BYTES >> 20) + " MiB or " + MAX_LINES
                + " lines: only the first " + mappings.size() + " mappings were read (libraries mapped after them"
                + " are not probed)";
    }

    public List<MemoryMapping> mappings() {
        return mappings;
    }

    /**
     * One mapping per distinct file that is mapped executable: the libraries (and the executable) whose code
     * the process can run — the lowest executable mapping of each, in address order. Deleted files are left out:
     * their path no longer names the code that runs.
     */
    public List<MemoryMapping> mappedLibraries() {
        Map<String, MemoryMapping> byPath = new LinkedHashMap<>();
        for (MemoryMapping mapping : mappings) {
            if (mapping.isFileBacked() && mapping.isExecutable() && !mapping.deleted()) {
                byPath.putIfAbsent(mapping.path(), mapping);
            }
        }
        return List.copyOf(byPath.values());
    }

    /** The mapped libraries whose path matches, e.g. {@code p -> p.contains("libggml")}. */
    public List<MemoryMapping> findLibraries(Predicate<String> pathMatches) {
        return mappedLibraries().stream().filter(m -> pathMatches.test(m.path())).toList();
    }

    /**
     * Those of {@code files} that the process has mapped as libraries: by real path, or by device and inode
     * where the process sees the file under another path (another mount namespace, a bind mount). Used to
     * notice libraries dlopen'ed after start-up.
     */
    public List<Path> mappedAmong(Collection<Path> files) {
        List<MemoryMapping> libraries = mappedLibraries();
        List<Path> mapped = new ArrayList<>();
        for (Path file : files) {
            FileIdentity identity = FileIdentity.of(file);
            if (identity != null && libraries.stream().anyMatch(identity::matches)) {
                mapped.add(file);
            }
        }
        return mapped;
    }

    /** A file's real path, device (as maps prints it, "major:minor" in hex) and inode. */
    private record FileIdentity(String realPath, String device, long inode) {
        static FileIdentity of(Path file) {
            try {
                Path real = file.toRealPath();
                long dev = ((Number) Files.getAttribute(real, "unix:dev")).longValue();
                long inode = ((Number) Files.getAttribute(real, "unix:ino")).longValue();
                return new FileIdentity(real.toString(), MemoryMapping.deviceAsMapsPrintsIt(dev), inode);
            } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
                return null;
            }
        }

        boolean matches(MemoryMapping mapping) {
            return mapping.path().equals(realPath) || (mapping.inode() == inode && mapping.device().equals(device));
        }
    }

    @Override
    public String toString() {
        return "ProcessMaps[" + source + ", " + mappings.size() + " mappings]";
    }

    private static final String DELETED_MARK = " (deleted)";

    // Format: start-end perms offset major:minor inode [path]; the path starts after the inode's padding
    // and may itself contain spaces.
    private static MemoryMapping parseLine(String source, int lineNumber, String line) throws TargetException {
        try {
            int at = 0;
            int dash = line.indexOf('-');
            int space = line.indexOf(' ', dash);
            long start = Long.parseUnsignedLong(line.substring(at, dash), 16);
            long end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
            at = space + 1;
            space = line.indexOf(' ', at);
            String permissions = line.substring(at, space);
            at = space + 1;
            space = line.indexOf(' ', at);
            long offset = Long.parseUnsignedLong(line.substring(at, space), 16);
            at = space + 1;
            space = line.indexOf(' ', at);
            String device = line.substring(at, space);
            at = space + 1;
            space = line.indexOf(' ', at);
            long inode = Long.parseLong(space < 0 ? line.substring(at) : line.substring(at, space));
            String path = space < 0 ? "" : line.substring(space).stripLeading();
            boolean deleted = path.endsWith(DELETED_MARK);
            if (deleted) {
                path = path.substring(0, path.length() - DELETED_MARK.length());
            }
            return new MemoryMapping(start, end, permissions, offset, device, inode, path, deleted);
        } catch (RuntimeException e) {
            throw new TargetException("malformed line " + lineNumber + " of " + source + ": " + line);
        }
    }
}
