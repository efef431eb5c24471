package dev.infertop.target.layout;

import dev.infertop.target.DynamicInfo;
import dev.infertop.target.ElfFile;
import dev.infertop.target.TargetException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The libraries a library needs that the calibration child could not read where they are: libllama needs
 * libggml and libggml-base (and a source build's libggml-cpu), found through its RUNPATH, often under a home
 * directory only their owner (or root) may enter, while the child runs as the target's user or nobody. Each
 * such library (DT_NEEDED, transitively, found in the RUNPATH/RPATH directories, system directories left to
 * the loader) is opened as the target maps it ({@link LibraryFile}: a regular file, the mapped inode) and
 * copied under its needed name into a fresh root-owned directory the child reads through LD_LIBRARY_PATH,
 * which the loader searches before RUNPATH. Nothing here runs the libraries' code; bounded in count and bytes.
 */
final class ChildLibraries {
    private ChildLibraries() {}

    static final int MAX_LIBRARIES = 32;
    static final long MAX_TOTAL_BYTES = 1L << 30;
    /** Left to the loader: readable by any user, and not the target's to choose. */
    private static final List<String> SYSTEM_DIRECTORIES = List.of("/lib", "/lib64", "/usr/lib", "/usr/lib64");

    /** Copies what {@code main} needs into {@code into} (created, 0755), returning the names copied. */
    static List<String> copyDependencies(LibraryFile main, OptionalInt targetPid, Path into) throws CalibrationException {
        try {
            Files.createDirectories(into);
            Files.setPosixFilePermissions(into, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw CalibrationException.of(main.shownAs(), "cannot make a directory for its libraries: " + e.getMessage());
        }
        List<Path> mapped = mappedLibraries(targetPid);
        Set<String> copied = new LinkedHashSet<>();
        Deque<Path> toScan = new ArrayDeque<>();
        toScan.add(main.procPath());
        Deque<Path> shownAs = new ArrayDeque<>();
        shownAs.add(main.shownAs());
        long totalBytes = 0;
        while (!toScan.isEmpty()) {
            Path scan = toScan.poll();
            Path library = shownAs.poll();
            DynamicInfo dynamic;
            try (ElfFile elf = ElfFile.open(scan)) {
                dynamic = elf.dynamic();
            } catch (TargetException e) {
                throw CalibrationException.of(library, "cannot read its dynamic section: " + e.getMessage());
            }
            for (String needed : dynamic.needed()) {
                if (copied.contains(needed) || !isPlainName(needed)) {
                    continue;
                }
                Path found = find(needed, library, dynamic, mapped);
                if (found == null) {
                    continue; // a system library, or one the loader finds by itself (or reports)
                }
                if (copied.size() >= MAX_LIBRARIES) {
                    throw CalibrationException.of(main.shownAs(), "it needs more than " + MAX_LIBRARIES + " libraries");
                }
                try (LibraryFile dependency = LibraryFile.open(found, targetPid)) {
                    long bytes = Files.size(dependency.procPath());
                    totalBytes += bytes;
                    if (totalBytes > MAX_TOTAL_BYTES) {
                        throw CalibrationException.of(main.shownAs(), "the libraries it needs exceed "
                                + (MAX_TOTAL_BYTES >> 20) + " MiB");
                    }
                    Path copy = into.resolve(needed);
                    Files.copy(dependency.procPath(), copy);
                    Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-r--r--"));
                } catch (IOException e) {
                    throw CalibrationException.of(found, "cannot copy it for the calibration child: " + e.getMessage());
                }
                copied.add(needed);
                toScan.add(into.resolve(needed));
                shownAs.add(found);
            }
        }
        return new ArrayList<>(copied);
    }

    /**
     * Where {@code needed} is: in {@code library}'s RUNPATH (or RPATH) directories; else the library of that
     * name (or that name plus a version) the target maps, found there through its own LD_LIBRARY_PATH; else,
     * without a target, beside {@code library}. Null when it is a system library or nowhere (the loader then
     * looks for itself, and the child reports what it misses).
     */
    private static Path find(String needed, Path library, DynamicInfo dynamic, List<Path> mapped) {
        Path origin = library.toAbsolutePath().getParent();
        List<String> directories = new ArrayList<>(dynamic.hasRunpath() ? dynamic.runpath() : dynamic.rpath());
        for (Path path : mapped) {
            String name = path.getFileName() == null ? "" : path.getFileName().toString();
            if (name.equals(needed) || name.startsWith(needed + ".")) {
                return isSystem(path) ? null : path;
            }
        }
        if (mapped.isEmpty() && origin != null) {
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
            } catch (IOException e) {
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
            return dev.infertop.target.ProcessMaps.of(targetPid.getAsInt()).mappings().stream()
                    .filter(m -> m.isFileBacked() && !m.deleted() && m.path().startsWith("/"))
                    .map(m -> Path.of(m.path())).distinct().toList();
        } catch (dev.infertop.target.TargetException | RuntimeException e) {
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

    /** A file name, not a path: the name becomes a file in the copy directory. */
    private static boolean isPlainName(String needed) {
        return !needed.isEmpty() && needed.length() <= 255 && !needed.contains("/") && !needed.equals(".")
                && !needed.equals("..") && needed.chars().allMatch(c -> c > 0x20 && c < 0x7f);
    }
}
