package dev.infertop.process;

import dev.infertop.model.SafeText;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which of a process's ELF objects hold llama.cpp/ggml code, told by what they define, not by their names: an
 * application may link llama.cpp into its executable or into an object of any name (a Node addon's
 * {@code index.node}, a Python extension's {@code .so}), and a file named libggml* is no proof either.
 *
 * <p>An object holds the code when .dynsym or .symtab defines a function named {@code ggml_*} or {@code llama_*}
 * (read in place: {@link ElfFile#definedFunctionsStartingWith}, on headers only, within {@link ScanTimeLimit}).
 * A stripped object whose tables name none of them cannot be probed either: the stripped-object recovery
 * ({@link StrippedFunctions}) starts from an exported {@code ggml_graph_compute}. libc, libstdc++ and the
 * rest fall out by the same reading, never by their names. Each file's answer is kept for the process's life by
 * its identity (device, inode, size, modification and change times), so the session's rescans of the maps read a file once.
 */
public final class GgmlCodeFinder {
    /** The name prefixes of llama.cpp's and ggml's functions. */
    static final List<String> PREFIXES = List.of("ggml_", "llama_");
    /** Names kept per object: enough to tell what it holds; an object with more only holds more. */
    static final int MAX_NAMES = 4096;
    /**
     * The ggml functions layout calibration needs to call (a subset of what it binds; see layout.GgmlLibrary):
     * the object that defines them all is ggml's core, whatever its name (libggml-base, libggml before the
     * backend split, or a program or addon that links ggml in).
     */
    public static final Set<String> CORE_FUNCTIONS = Set.of("ggml_init", "ggml_free", "ggml_op_name", "ggml_type_name",
            "ggml_new_tensor_1d", "ggml_new_graph", "ggml_build_forward_expand", "ggml_mul_mat");
    /** Files remembered: a process maps a few hundred at most; past this the oldest answers are forgotten. */
    private static final int MAX_REMEMBERED = 4096;

    /**
     * What one object was found to hold.
     *
     * @param file          the object as named in the maps (or given)
     * @param ggmlFunctions how many {@code ggml_*} functions it defines (up to {@link #MAX_NAMES} names in all)
     * @param llamaFunctions how many {@code llama_*} functions it defines
     * @param ggmlCore      whether it defines every {@link #CORE_FUNCTIONS}: the object to calibrate against
     * @param failure       why it could not be read (null when it was): then it holds nothing that can be probed
     */
    public record Finding(Path file, int ggmlFunctions, int llamaFunctions, boolean ggmlCore, String failure) {
        public boolean holdsCode() {
            return ggmlFunctions + llamaFunctions > 0;
        }

        /** Short, for a line naming what was looked at: "index.node (1020 ggml_*, 310 llama_*)". */
        public String summary() {
            String name = SafeText.of(file.getFileName() == null ? file.toString() : file.getFileName().toString());
            if (failure != null) {
                return name + " (unreadable)";
            }
            if (!holdsCode()) {
                return name + " (none)";
            }
            return name + " (" + ggmlFunctions + " ggml_*, " + llamaFunctions + " llama_*)";
        }
    }

    /** A file as stat shows it; ctime too, which no owner can set back (touch -r sets only the modification time). */
    private record Identity(Object fileKey, long sizeBytes, long modifiedNs, long changedNs) {}

    private static final Map<Identity, Finding> REMEMBERED = new ConcurrentHashMap<>();

    private GgmlCodeFinder() {}

    /**
     * What {@code file} holds, read (within the scan time limit) from the very file {@code mappedAs} shows the
     * target mapped when given, else from the path without following a link at its end. Never throws: a file
     * that cannot be read is a finding with its failure.
     */
    public static Finding examine(Path file, MemoryMapping mappedAs) {
        Optional<Identity> identity = identityOf(file);
        if (identity.isPresent()) {
            Finding known = REMEMBERED.get(identity.get());
            if (known != null) {
                return known.file().equals(file) ? known : new Finding(file, known.ggmlFunctions(),
                        known.llamaFunctions(), known.ggmlCore(), known.failure());
            }
        }
        if (!file.isAbsolute()) {
            return new Finding(file, 0, 0, false, "not a file's path"); // [vdso] and the like
        }
        Finding found;
        try {
            found = ScanTimeLimit.run(file.toString(), ScanTimeLimit.limitMs(), () -> read(file, mappedAs));
        } catch (TargetException e) {
            // Remembered too (by the identity it had before the reading): a file that took the whole time limit
            // once is not read again at every rescan of the maps; a changed file is another identity.
            found = new Finding(file, 0, 0, false, e.getMessage());
        }
        if (identity.isPresent()) {
            if (REMEMBERED.size() >= MAX_REMEMBERED) {
                REMEMBERED.clear();
            }
            REMEMBERED.put(identity.get(), found);
        }
        return found;
    }

    /** ggml's assertion message (GGML_ASSERT's format string), in the read-only data of any object that links ggml. */
    static final byte[] GGML_ASSERT_FORMAT = "GGML_ASSERT(%s) failed".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    /** The read-only data searched at most: a large application's is tens of MB, ggml's strings sit among them. */
    static final long MAX_RODATA_BYTES = 256L << 20;

    /**
     * Whether {@code file}, which names no ggml or llama function, still holds ggml's code by its strings (an
     * application that links ggml in with every symbol hidden and stripped): then nothing in it can be probed by
     * name, and the refusal says so rather than "no ggml". Read only on that path (within the scan time limit);
     * false where the file cannot be read.
     */
    public static boolean holdsAnonymousGgml(Path file) {
        if (!file.isAbsolute()) {
            return false;
        }
        try {
            return ScanTimeLimit.run(file.toString(), ScanTimeLimit.limitMs(), () -> {
                try (ElfFile elf = ElfFile.openHeaders(file)) {
                    return elf.sectionContains(".rodata", GGML_ASSERT_FORMAT, MAX_RODATA_BYTES);
                }
            });
        } catch (TargetException e) {
            return false;
        }
    }

    /** {@link #examine} by path alone (the session's rescans of the maps). */
    public static boolean holdsCode(Path file) {
        return examine(file, null).holdsCode();
    }

    private static Finding read(Path file, MemoryMapping mappedAs) throws TargetException {
        try (ElfFile elf = mappedAs == null ? ElfFile.openHeaders(file) : ElfFile.openHeaders(file, mappedAs)) {
            Set<String> names = elf.definedFunctionsStartingWith(PREFIXES, MAX_NAMES);
            int ggml = (int) names.stream().filter(n -> n.startsWith("ggml_")).count();
            return new Finding(file, ggml, names.size() - ggml, names.containsAll(CORE_FUNCTIONS), null);
        }
    }

    /** The file's identity now, by its path (a link at its end not followed); empty when it cannot be looked at. */
    private static Optional<Identity> identityOf(Path file) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isRegularFile() || attributes.fileKey() == null) {
                return Optional.empty();
            }
            Object changed = Files.getAttribute(file, "unix:ctime", LinkOption.NOFOLLOW_LINKS);
            if (!(changed instanceof java.nio.file.attribute.FileTime changedTime)) {
                return Optional.empty();
            }
            return Optional.of(new Identity(attributes.fileKey(), attributes.size(),
                    attributes.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS),
                    changedTime.to(java.util.concurrent.TimeUnit.NANOSECONDS)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
