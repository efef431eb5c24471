package dev.infertop.process.layout;

import dev.infertop.process.ProcessMaps;
import dev.infertop.process.DynamicInfo;
import dev.infertop.process.ElfFile;
import dev.infertop.process.TargetException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The libraries a library needs that the calibration child could not find or read where they are: libllama
 * needs libggml and libggml-base (and a source build's libggml-cpu), found through its RUNPATH, often under a
 * home directory only their owner (or root) may enter, while the child runs as the target's user or nobody.
 * Each such library (DT_NEEDED, transitively; system directories left to the loader) is opened as the target maps
 * it ({@link LibraryFile}: through /proc/PID/map_files, a regular file, the mapped inode) and handed to the child
 * as a bind of that very open file under its needed name ({@link SandboxHelper.Bind}): nothing is copied, and
 * the child can read it only if the file's own mode lets its user. For a running target that maps the library,
 * only files it maps are opened: a path its RUNPATH names is never followed by root. Otherwise (no target, or a
 * command infertop starts, at its gate before ld.so ran: the user's own files), the RUNPATH directories and the
 * library's own are searched. Nothing here
 * runs the libraries' code; bounded in count and bytes. The caller closes the result after the child ended.
 */
final class ChildLibraries implements AutoCloseable {
    static final int MAX_LIBRARIES = 32;
    static final long MAX_TOTAL_BYTES = 1L << 30;
    /** Left to the loader: readable by any user, and not the target's to choose. */
    private static final List<String> SYSTEM_DIRECTORIES = List.of("/lib", "/lib64", "/usr/lib", "/usr/lib64");

    private final List<LibraryFile> opened = new ArrayList<>();
    private final List<SandboxHelper.Bind> binds = new ArrayList<>();

    private ChildLibraries() {}

    /** The binds for the child: each library opened here, by the name {@code main} (or another) needs it. */
    List<SandboxHelper.Bind> binds() {
        return List.copyOf(binds);
    }

    /** Opens what {@code main} needs (see the class comment). */
    static ChildLibraries open(LibraryFile main, OptionalInt targetPid) throws CalibrationException {
        ChildLibraries libraries = new ChildLibraries();
        try {
            libraries.collect(main, targetPid);
            return libraries;
        } catch (CalibrationException | RuntimeException e) {
            libraries.close();
            throw e;
        }
    }

    private void collect(LibraryFile main, OptionalInt targetPid) throws CalibrationException {
        List<Path> mapped = mappedLibraries(targetPid);
        // A running target that maps the library: only what it maps. A command infertop starts, waiting at its gate
        // before ld.so ran (it maps nothing yet), is the user's own: its libraries are found as ld.so will.
        boolean targetMapsIt = mapped.contains(main.shownAs());
        Set<String> found = new LinkedHashSet<>();
        Deque<LibraryFile> toScan = new ArrayDeque<>();
        toScan.add(main);
        long totalBytes = 0;
        while (!toScan.isEmpty()) {
            LibraryFile library = toScan.poll();
            DynamicInfo dynamic;
            try (ElfFile elf = ElfFile.open(library.procPath())) {
                dynamic = elf.dynamic();
            } catch (TargetException e) {
                throw CalibrationException.of(library.shownAs(), "cannot read its dynamic section: " + e.getMessage());
            }
            for (String needed : dynamic.needed()) {
                if (found.contains(needed) || !isPlainName(needed)) {
                    continue;
                }
                Path where = find(needed, library.shownAs(), dynamic, mapped, targetMapsIt);
                if (where == null) {
                    continue; // a system library, or one the loader finds by itself (or reports)
                }
                if (found.size() >= MAX_LIBRARIES) {
                    throw CalibrationException.of(main.shownAs(), "it needs more than " + MAX_LIBRARIES + " libraries");
                }
                LibraryFile dependency = LibraryFile.open(where, targetPid);
                opened.add(dependency);
                try {
                    totalBytes += Files.size(dependency.procPath());
                } catch (java.io.IOException e) {
                    throw CalibrationException.of(where, "cannot stat it: " + e.getMessage());
                }
                if (totalBytes > MAX_TOTAL_BYTES) {
                    throw CalibrationException.of(main.shownAs(), "the libraries it needs exceed "
                            + (MAX_TOTAL_BYTES >> 20) + " MiB");
                }
                found.add(needed);
                binds.add(new SandboxHelper.Bind(dependency.hostPath(), needed));
                toScan.add(dependency);
            }
        }
    }

    /**
     * Where {@code needed} is: the library of that name (or that name plus a version) the target maps; without a
     * target, in {@code library}'s RUNPATH (or RPATH) directories or beside it. Null when it is a system library
     * or nowhere (the loader then looks for itself, and the child reports what it misses).
     */
    private static Path find(String needed, Path library, DynamicInfo dynamic, List<Path> mapped, boolean onlyMapped) {
        for (Path path : mapped) {
            String name = path.getFileName() == null ? "" : path.getFileName().toString();
            if (name.equals(needed) || name.startsWith(needed + ".")) {
                return isSystem(path) ? null : path;
            }
        }
        if (onlyMapped) {
            return null; // only what the target maps: never a path it chose
        }
        Path origin = library.toAbsolutePath().getParent();
        List<String> directories = new ArrayList<>(dynamic.hasRunpath() ? dynamic.runpath() : dynamic.rpath());
        if (origin != null) {
            directories.add(origin.toString());
        }
        for (String entry : directories) {
            if (entry.isEmpty()) {
                continue;
            }
            String expanded = origin == null ? entry
                    : entry.replace("${ORIGIN}", origin.toString()).replace("$ORIGIN", origin.toString());
            if (!expanded.startsWith("/") || expanded.contains("$")) {
                continue;
            }
            Path candidate = Path.of(expanded).resolve(needed);
            if (!Files.isRegularFile(candidate)) {
                continue;
            }
            try {
                Path real = candidate.toRealPath();
                return isSystem(real) ? null : real;
            } catch (java.io.IOException e) {
                continue;
            }
        }
        return null;
    }

    /** The files the target maps (empty without a target). */
    private static List<Path> mappedLibraries(OptionalInt targetPid) throws CalibrationException {
        if (targetPid.isEmpty()) {
            return List.of();
        }
        try {
            return ProcessMaps.of(targetPid.getAsInt()).mappings().stream()
                    .filter(m -> m.isFileBacked() && !m.deleted() && m.path().startsWith("/"))
                    .map(m -> Path.of(m.path())).distinct().toList();
        } catch (TargetException | RuntimeException e) {
            throw new CalibrationException("cannot read the target's mappings: " + e.getMessage());
        }
    }

    private static boolean isSystem(Path real) {
        for (String directory : SYSTEM_DIRECTORIES) {
            if (real.startsWith(directory)) {
                return true;
            }
        }
        return false;
    }

    /** A file name, not a path: the name becomes a file in the child's library directory. */
    private static boolean isPlainName(String needed) {
        return !needed.isEmpty() && needed.length() <= 255 && !needed.contains("/") && !needed.equals(".")
                && !needed.equals("..") && needed.chars().allMatch(c -> c > 0x20 && c < 0x7f);
    }

    @Override
    public void close() {
        for (LibraryFile file : opened) {
            file.close();
        }
        opened.clear();
    }
}
