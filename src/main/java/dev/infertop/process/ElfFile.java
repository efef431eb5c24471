package dev.infertop.process;

import dev.infertop.ffi.RegularFile;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A 64-bit little-endian ELF shared object or executable (x86_64 or aarch64), mapped read-only.
 *
 * <p>Headers, symbol tables and .dynamic are decoded once in {@link #open}; lookups afterwards are hash or
 * binary-search lookups, because a llama.cpp CPU backend carries tens of thousands of symbols and the attacher
 * asks for a handful of them per library. The mapping stays open only for {@link #readBytesAtVaddr} and is
 * released by {@link #close}.
 *
 * <p>Over 500 lines on purpose: the file is hostile input (the target's), and every read here sits next to the
 * bound that guards it (sizes, counts, entry sizes, offsets, a time limit), fuzzed as one unit
 * (ElfFileFuzzTest). Split into section readers, the checks would drift apart from the reads they guard.
 */
public final class ElfFile implements AutoCloseable {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final int ELF_HEADER_BYTES = 64;
    private static final int SECTION_HEADER_BYTES = 64;
    private static final int PROGRAM_HEADER_BYTES = 56;
    private static final int SYMBOL_BYTES = 24;
    private static final int RELA_BYTES = 24;
    private static final int DYNAMIC_ENTRY_BYTES = 16;

    // Bounds on what a file can make infertop do (infertop runs as root with a small heap; the file is the
    // target's). Real llama.cpp builds stay far below each: libggml-cpu has ~20 k functions and ~10 k
    // relocations, its largest scanned function is a few KiB, its .plt a few KiB, a build-id 20 bytes.
    /** The largest file mapped (mapped, not read: it costs address space, not heap). */
    static final long MAX_FILE_BYTES = 4L << 30;
    /** Functions kept from .dynsym and .symtab together. */
    static final int MAX_FUNCTIONS = 500_000;
    /** Relocations read from one RELA section. */
    static final int MAX_RELOCATIONS = 1_000_000;
    /** Bytes copied by one {@link #readBytesAtVaddr} (a scanned function, a PLT section). */
    public static final int MAX_READ_BYTES = 4 << 20;
    /** Bytes of string tables scanned for names, over the whole file: each name costs its length. */
    static final long MAX_STRING_BYTES_SCANNED = 256L << 20;
    /** DT_NEEDED entries kept. */
    static final int MAX_NEEDED = 4096;
    private static final int MAX_BUILD_ID_BYTES = 64;
    /**
     * PT_LOAD segments accepted: a real library or program has two to five (more with -z separate-code and
     * relro), and each read looks its address up among them. A file with more is refused: e_phnum allows 65,535.
     */
    static final int MAX_LOAD_SEGMENTS = 128;
    private static final int PT_LOAD = 1;
    private static final int PT_INTERP = 3;
    private static final int PT_DYNAMIC = 2;
    private static final int PT_NOTE = 4;
    private static final int STT_FUNC = 2;
    private static final int SHN_UNDEF = 0;
    private static final int NT_GNU_BUILD_ID = 3;
    private static final long DT_NULL = 0, DT_NEEDED = 1, DT_STRTAB = 5, DT_STRSZ = 10, DT_SONAME = 14,
            DT_RPATH = 15, DT_RUNPATH = 29;
    /** GCC's suffixes for specialised copies of a function that callers enter instead of the original. */
    private static final Pattern CLONE_SUFFIX = Pattern.compile("(\\.(isra|constprop|part|lto_priv)\\.\\d+)+");

    private final Path path;
    private final Arena arena;
    private final MemorySegment file;
    private final Machine machine;
    private final List<ElfSection> sections;
    private final List<LoadSegment> loadSegments;
    /** {@link #loadSegments}' file-backed ranges sorted by address and disjoint: then one binary search finds one. */
    private final boolean segmentsSearchable;
    private AddressIndex addressIndex;
    private final List<ElfSymbol> functions;
    private final Map<String, List<ElfSymbol>> functionsByName;
    private final String[] sortedFunctionNames;
    private final DynamicInfo dynamic;
    private final Optional<String> buildId;
    private long stringBytesLeft = MAX_STRING_BYTES_SCANNED;

    /** Which symbol tables to decode: the function lookups see only those. */
    private enum Symbols {
        /** none ({@link #openHeaders}): a function lookup throws IllegalStateException */
        NONE,
        /** .dynsym and .symtab */
        ALL
    }

    private final Symbols symbolsRead;

    private ElfFile(Path path, Arena arena, MemorySegment file, Symbols symbols) throws TargetException {
        this.path = path;
        this.arena = arena;
        this.file = file;
        this.machine = readMachine();
        this.sections = readSections();
        this.loadSegments = readLoadSegments();
        this.segmentsSearchable = sortedAndDisjoint(loadSegments);
        this.symbolsRead = symbols;
        this.functions = symbols == Symbols.NONE ? List.of() : readFunctions();
        this.functionsByName = indexByName(functions);
        this.sortedFunctionNames = functionsByName.keySet().toArray(String[]::new);
        Arrays.sort(sortedFunctionNames);
        this.dynamic = readDynamic();
        this.buildId = readBuildId();
    }

    /** Maps and decodes {@code path}; the caller closes the result. */
    public static ElfFile open(Path path) throws TargetException {
        return open(path, null);
    }

    /**
     * Maps and decodes {@code path}, which must be a regular file and, when {@code mappedAs} is given, the very
     * file (device and inode) that mapping shows the target mapped: a FIFO, a device, or another file swapped
     * in under the path is refused without blocking. The caller closes the result.
     */
    public static ElfFile open(Path path, MemoryMapping mappedAs) throws TargetException {
        return open(path, mappedAs, Symbols.ALL);
    }

    /**
     * {@code path} decoded without its symbol tables: its headers, segments, dynamic section and build-id, for
     * what needs no function (a library's identity, its DT_NEEDED). Decoding libllama's tens of thousands of
     * symbols was most of a cached calibration's time at start. The function lookups of the result
     * throw IllegalStateException.
     */
    public static ElfFile openHeaders(Path path) throws TargetException {
        return open(path, null, Symbols.NONE);
    }

    /** {@link #openHeaders(Path)} of the very file {@code mappedAs} shows the target mapped (see {@link #open(Path, MemoryMapping)}). */
    public static ElfFile openHeaders(Path path, MemoryMapping mappedAs) throws TargetException {
        return open(path, mappedAs, Symbols.NONE);
    }

    private static ElfFile open(Path path, MemoryMapping mappedAs, Symbols symbols) throws TargetException {
        Arena arena = Arena.ofShared();
        try (RegularFile opened = mappedAs == null ? RegularFile.open(path, MAX_FILE_BYTES, true)
                : MappedFile.open(path, mappedAs, MAX_FILE_BYTES)) {
            MemorySegment file = opened.channel().map(FileChannel.MapMode.READ_ONLY, 0, opened.sizeBytes(), arena);
            return parse(path, arena, file, symbols);
        } catch (NoSuchFileException e) {
            arena.close();
            throw new TargetException("no such file: " + path);
        } catch (AccessDeniedException e) {
            arena.close();
            throw new TargetException("permission denied reading " + path);
        } catch (FileSystemException e) {
            arena.close();
            if (mappedAs != null && e.getReason() != null && e.getReason().startsWith(RegularFile.NOT_EXPECTED)) {
                throw new TargetException(path + " is no longer the file the process mapped (device "
                        + mappedAs.device() + ", inode " + mappedAs.inode() + "): it was replaced");
            }
            throw new TargetException(path + ": " + e.getReason());
        } catch (TargetException e) {
            arena.close();
            throw e;
        } catch (IOException e) {
            arena.close();
            throw new TargetException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Decodes {@code file} (the whole ELF image), named {@code path} in messages; {@code arena} (the image's)
     * is the caller's to close when this fails, the result's afterwards. Every header field is checked against the image before it is used: a corrupt or hostile file
     * fails with a {@link TargetException}, never with an exception of another kind, a hang or an
     * allocation its size does not bound. Public for a private copy of a file's bytes (SiteFinder decodes the very
     * bytes it hashed, which a file's owner cannot rewrite under it as they can a mapping).
     */
    public static ElfFile parse(Path path, Arena arena, MemorySegment file) throws TargetException {
        return parse(path, arena, file, Symbols.ALL);
    }

    private static ElfFile parse(Path path, Arena arena, MemorySegment file, Symbols symbols)
            throws TargetException {
        try {
            return new ElfFile(path, arena, file, symbols);
        } catch (IndexOutOfBoundsException | IllegalArgumentException | ArithmeticException e) {
            throw new TargetException("truncated or corrupt ELF file: " + path);
        } catch (InternalError e) {
            throw changedWhileRead(path);
        }
    }

    /**
     * The file is mapped, not copied: when its owner truncates it meanwhile, a read of a page now past its end
     * faults (SIGBUS), which the JVM raises as an InternalError in the reading thread.
     */
    private static TargetException changedWhileRead(Path path) {
        return new TargetException(path + " was truncated while infertop read it");
    }

    /**
     * Reads only the ELF header: the machine of an ELF64 little-endian file, empty for anything else
     * (another class or architecture, not ELF, unreadable). ld.so skips such candidates while searching.
     */
    public static Optional<Machine> peekMachine(Path path) {
        try (RegularFile opened = RegularFile.open(path, MAX_FILE_BYTES, true)) {
            FileChannel channel = opened.channel();
            var header = java.nio.ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
            while (header.hasRemaining() && channel.read(header) > 0) {
                // a short read on a regular file only happens at its end
            }
            if (header.position() < 20 || header.getInt(0) != 0x464c457f || header.get(4) != 2 || header.get(5) != 1) {
                return Optional.empty();
            }
            return Machine.fromElfCode(Short.toUnsignedInt(header.getShort(18)));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    public Path path() {
        return path;
    }

    public Machine machine() {
        return machine;
    }

    public List<ElfSection> sections() {
        return sections;
    }

    public Optional<ElfSection> section(String name) {
        return sections.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    public List<LoadSegment> loadSegments() {
        return loadSegments;
    }

    /** All defined FUNC symbols of .dynsym and .symtab, each (name, address) once. */
    public List<ElfSymbol> functions() {
        requireFunctions();
        return functions;
    }

    /**
     * The function called exactly {@code name}. Static functions of different translation units may share a
     * name; then an exported (non-LOCAL) one wins, else the first in table order.
     */
    public Optional<ElfSymbol> function(String name) {
        requireFunctions();
        List<ElfSymbol> named = functionsByName.getOrDefault(name, List.of());
        return named.stream().filter(s -> s.binding() != SymbolBinding.LOCAL).findFirst()
                .or(() -> named.stream().findFirst());
    }

    /** The first function, in table order, that starts at {@code vaddr} (a binary search, not a scan). */
    public Optional<ElfSymbol> functionAt(long vaddr) {
        return addressIndex().first(vaddr);
    }

    /** Every function that starts at {@code vaddr}, in table order. */
    public List<ElfSymbol> functionsAt(long vaddr) {
        return addressIndex().all(vaddr);
    }

    private synchronized AddressIndex addressIndex() {
        requireFunctions();
        if (addressIndex == null) {
            addressIndex = new AddressIndex(functions);
        }
        return addressIndex;
    }

    /** Every function called exactly {@code name}. */
    public List<ElfSymbol> functionsNamed(String name) {
        requireFunctions();
        return functionsByName.getOrDefault(name, List.of());
    }

    /**
     * {@code baseName} itself and its compiler-made local clones ({@code baseName.isra.0},
     * {@code baseName.constprop.0}, {@code baseName.part.0}, {@code baseName.lto_priv.0}, and chains of them):
     * the entries through which calls of the source-level function actually go. Other dotted names are not
     * entries of this function and are left out: {@code .cold} parts are jumped into from the hot part,
     * {@code ._omp_fn.0} is an OpenMP parallel region run by every worker thread, and {@code .localalias}
     * shares the address of the function itself.
     */
    public List<ElfSymbol> functionAndClones(String baseName) {
        List<ElfSymbol> matches = new ArrayList<>(functionsNamed(baseName));
        String clonePrefix = baseName + ".";
        int from = Arrays.binarySearch(sortedFunctionNames, clonePrefix);
        for (int i = from >= 0 ? from : -from - 1; i < sortedFunctionNames.length; i++) {
            String name = sortedFunctionNames[i];
            if (!name.startsWith(clonePrefix)) {
                break;
            }
            if (CLONE_SUFFIX.matcher(name).region(baseName.length(), name.length()).matches()) {
                matches.addAll(functionsByName.get(name));
            }
        }
        return matches;
    }

    private void requireFunctions() {
        if (symbolsRead == Symbols.NONE) {
            throw new IllegalStateException(path + " was opened for its headers only: no function to look up");
        }
    }

    /**
     * Whether {@code path} begins with ELF's magic bytes (a script, for one, does not: its interpreter is what
     * runs). Read without blocking on a FIFO: only a regular file is opened.
     */
    public static boolean hasElfMagic(Path path) throws TargetException {
        if (!java.nio.file.Files.isRegularFile(path)) {
            throw new TargetException(path + " is not a regular file");
        }
        byte[] magic = new byte[4];
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(path)) {
            return in.readNBytes(magic, 0, 4) == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L'
                    && magic[3] == 'F';
        } catch (java.io.IOException e) {
            throw new TargetException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    /** e_entry: the link-time address of the first instruction the program runs (after its loader, if any). */
    public long entryPoint() {
        return file.get(U64, 0x18);
    }

    /**
     * Whether the file names a program interpreter (PT_INTERP, a dynamic loader): its libraries are then mapped
     * by that loader after exec, before {@link #entryPoint()} runs.
     */
    public boolean hasInterpreter() throws TargetException {
        return programHeaders().stream().anyMatch(h -> h.type() == PT_INTERP);
    }

    /** The file offset of the byte at link-time address {@code vaddr}: what libbpf's uprobe func_offset wants. */
    public long fileOffsetOf(long vaddr) throws TargetException {
        return segmentContaining(vaddr).fileOffsetOf(vaddr);
    }

    /** Up to {@code count} bytes from {@code vaddr}, fewer where its PT_LOAD segment's file content ends. */
    public byte[] readBytesAtVaddr(long vaddr, int count) throws TargetException {
        if (count < 0 || count > MAX_READ_BYTES) {
            throw corrupt("a read of " + Integer.toUnsignedString(count) + " bytes at 0x" + Long.toHexString(vaddr)
                    + " (more than " + MAX_READ_BYTES + ")");
        }
        LoadSegment segment = segmentContaining(vaddr);
        long available = segment.fileSizeBytes() - (vaddr - segment.vaddr());
        long offset = segment.fileOffsetOf(vaddr);
        if (offset < 0 || offset > file.byteSize() || available < 0) {
            throw corrupt("address 0x" + Long.toHexString(vaddr) + " maps past the end of the file");
        }
        int length = (int) Math.min(count, Math.min(available, file.byteSize() - offset));
        try {
            return file.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
        } catch (InternalError e) {
            throw changedWhileRead(path);
        }
    }

    /**
     * Whether the file content of section {@code name} holds {@code needle}, reading at most {@code maxBytes} of
     * it (a section that is absent, has no file content or lies past the file's end holds nothing).
     */
    public boolean sectionContains(String name, byte[] needle, long maxBytes) throws TargetException {
        Optional<ElfSection> section = section(name);
        if (section.isEmpty() || section.get().type() == ElfSection.SHT_NOBITS || needle.length == 0) {
            return false;
        }
        long start = section.get().fileOffset();
        if (start < 0 || start >= file.byteSize()) {
            return false;
        }
        long length = Math.min(Math.min(section.get().sizeBytes(), maxBytes), file.byteSize() - start);
        try {
            byte first = needle[0];
            for (long i = 0; i + needle.length <= length; i++) {
                if (file.get(ValueLayout.JAVA_BYTE, start + i) != first) {
                    continue;
                }
                long mismatch = MemorySegment.mismatch(file, start + i, start + i + needle.length,
                        MemorySegment.ofArray(needle), 0, needle.length);
                if (mismatch < 0) {
                    return true;
                }
            }
            return false;
        } catch (InternalError e) {
            throw changedWhileRead(path);
        }
    }

    /**
     * The entries of one SHT_RELA section, their symbols named from the symbol table the section links to
     * (empty name for symbol index 0, as in R_X86_64_RELATIVE). Read on each call: only call-site scanning asks.
     */
    public List<ElfRelocation> relocations(ElfSection rela) throws TargetException {
        if (rela.type() != ElfSection.SHT_RELA || rela.entrySizeBytes() < RELA_BYTES
                || rela.entrySizeBytes() > MAX_ENTRY_BYTES) {
            throw new TargetException(rela.name() + " is not a RELA section in " + path);
        }
        long count = entries(rela, "relocation");
        if (count > MAX_RELOCATIONS) {
            throw corrupt(rela.name() + " holds " + count + " relocations (at most " + MAX_RELOCATIONS + " read)");
        }
        ElfSection symbols = rela.link() > 0 && rela.link() < sections.size() ? sections.get(rela.link()) : null;
        ElfSection strings = symbols != null && symbols.link() > 0 && symbols.link() < sections.size()
                ? sections.get(symbols.link()) : null;
        long symbolCount = symbols == null || symbols.entrySizeBytes() < SYMBOL_BYTES
                || symbols.entrySizeBytes() > MAX_ENTRY_BYTES ? 0 : entries(symbols, "symbol");
        Map<Integer, String> names = new HashMap<>();
        List<ElfRelocation> result = new ArrayList<>((int) Math.min(count, 1024));
        try {
            for (long i = 0; i < count; i++) {
                checkTime(i);
                long at = rela.fileOffset() + i * rela.entrySizeBytes();
                long info = file.get(U64, at + 8);
                int symbolIndex = (int) (info >>> 32);
                String name = "";
                if (symbolIndex != 0) {
                    if (strings == null || Integer.toUnsignedLong(symbolIndex) >= symbolCount) {
                        throw corrupt(rela.name() + " names symbol " + Integer.toUnsignedString(symbolIndex)
                                + ", which its symbol table does not hold");
                    }
                    name = names.get(symbolIndex);
                    if (name == null) {
                        long symbol = symbols.fileOffset() + symbolIndex * symbols.entrySizeBytes();
                        name = string(strings, Integer.toUnsignedLong(file.get(U32, symbol)));
                        names.put(symbolIndex, name);
                    }
                }
                result.add(new ElfRelocation(file.get(U64, at), (int) info, symbolIndex, name, file.get(U64, at + 16)));
            }
        } catch (IndexOutOfBoundsException e) {
            throw corrupt(rela.name() + " reaches past the end of the file");
        } catch (InternalError e) {
            throw changedWhileRead(path);
        }
        return result;
    }

    public DynamicInfo dynamic() {
        return dynamic;
    }

    public List<String> needed() {
        return dynamic.needed();
    }

    public Optional<String> soname() {
        return dynamic.soname();
    }

    /** Stripped means no .symtab: only exported (.dynsym) functions can be found, local clones cannot. */
    public boolean isStripped() {
        return sections.stream().noneMatch(s -> s.type() == ElfSection.SHT_SYMTAB);
    }

    /** The GNU build-id as lowercase hex, identifying this exact build across copies and renames. */
    public Optional<String> buildId() {
        return buildId;
    }

    @Override
    public void close() {
        arena.close();
    }

    @Override
    public String toString() {
        return "ElfFile[" + path + ", " + machine + "]";
    }

    /**
     * The first segment, in table order, whose file-backed bytes hold {@code vaddr}: a binary search where the
     * segments are in address order and disjoint (as linkers write them: then at most one holds it), else a scan
     * of the at most {@link #MAX_LOAD_SEGMENTS}.
     */
    private LoadSegment segmentContaining(long vaddr) throws TargetException {
        LoadSegment found = segmentContaining(loadSegments, segmentsSearchable, vaddr);
        if (found != null) {
            return found;
        }
        throw new TargetException("address 0x" + Long.toHexString(vaddr) + " is in no loaded part of " + path);
    }

    private Machine readMachine() throws TargetException {
        if (file.byteSize() < ELF_HEADER_BYTES || file.get(U32, 0) != 0x464c457f
                || file.get(ValueLayout.JAVA_BYTE, 4) != 2 || file.get(ValueLayout.JAVA_BYTE, 5) != 1) {
            throw new TargetException("not an ELF64 little-endian file: " + path);
        }
        int code = u16(18);
        return Machine.fromElfCode(code).orElseThrow(() -> new TargetException(
                "unsupported machine (ELF e_machine " + code + ") in " + path + ": only x86_64 and aarch64"));
    }

    private List<ElfSection> readSections() throws TargetException {
        long tableOffset = file.get(U64, 0x28);
        int entrySize = u16(0x3a);
        int count = u16(0x3c);
        int namesIndex = u16(0x3e);
        if (tableOffset == 0 || count == 0) {
            return List.of();
        }
        if (entrySize < SECTION_HEADER_BYTES) {
            throw corrupt("section headers of " + entrySize + " bytes (an ELF64 one has " + SECTION_HEADER_BYTES + ")");
        }
        requireInFile(tableOffset, (long) count * entrySize, "the section header table");
        if (namesIndex >= count) {
            throw corrupt("section name table " + namesIndex + " of " + count + " sections");
        }
        long namesAt = tableOffset + (long) namesIndex * entrySize;
        long namesOffset = file.get(U64, namesAt + 0x18);
        long namesSize = file.get(U64, namesAt + 0x20);
        List<ElfSection> result = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long at = tableOffset + (long) i * entrySize;
            result.add(new ElfSection(
                    namesIndex == 0 ? "" : string(namesOffset, namesSize, Integer.toUnsignedLong(file.get(U32, at))),
                    file.get(U32, at + 0x04),
                    file.get(U64, at + 0x08),
                    file.get(U64, at + 0x10),
                    file.get(U64, at + 0x18),
                    file.get(U64, at + 0x20),
                    file.get(U32, at + 0x28),
                    file.get(U64, at + 0x38)));
        }
        return Collections.unmodifiableList(result);
    }

    private record ProgramHeader(int type, int flags, long fileOffset, long vaddr, long fileSize, long memorySize) {}

    private List<ProgramHeader> programHeaders() throws TargetException {
        long tableOffset = file.get(U64, 0x20);
        int entrySize = u16(0x36);
        int count = u16(0x38);
        if (count == 0) {
            return List.of();
        }
        if (entrySize < PROGRAM_HEADER_BYTES) {
            throw corrupt("program headers of " + entrySize + " bytes (an ELF64 one has " + PROGRAM_HEADER_BYTES + ")");
        }
        requireInFile(tableOffset, (long) count * entrySize, "the program header table");
        List<ProgramHeader> result = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long at = tableOffset + (long) i * entrySize;
            result.add(new ProgramHeader(file.get(U32, at), file.get(U32, at + 4), file.get(U64, at + 8),
                    file.get(U64, at + 0x10), file.get(U64, at + 0x20), file.get(U64, at + 0x28)));
        }
        return result;
    }

    private List<LoadSegment> readLoadSegments() throws TargetException {
        List<LoadSegment> segments = programHeaders().stream()
                .filter(h -> h.type() == PT_LOAD)
                .map(h -> new LoadSegment(h.vaddr(), h.fileOffset(), h.fileSize(), h.memorySize(), h.flags()))
                .toList();
        if (segments.size() > MAX_LOAD_SEGMENTS) {
            throw corrupt(segments.size() + " PT_LOAD segments (at most " + MAX_LOAD_SEGMENTS + " read)");
        }
        return segments;
    }

    /**
     * Whether each segment starts at or after every earlier one's file-backed end, all within [0, 2^63): then
     * containsFileBacked is plain interval arithmetic, at most one segment holds an address, and
     * {@link #segmentContaining}'s binary search finds exactly what the scan in table order finds.
     */
    static boolean sortedAndDisjoint(List<LoadSegment> segments) {
        long end = 0;
        for (LoadSegment segment : segments) {
            long start = segment.vaddr();
            long size = segment.fileSizeBytes();
            if (start < 0 || size < 0 || start + size < 0 || start < end) {
                return false;
            }
            end = start + size;
        }
        return true;
    }

    /** {@link #segmentContaining}'s search: a binary one when {@code searchable} ({@link #sortedAndDisjoint}). */
    static LoadSegment segmentContaining(List<LoadSegment> segments, boolean searchable, long vaddr) {
        if (!searchable) {
            for (LoadSegment segment : segments) {
                if (segment.containsFileBacked(vaddr)) {
                    return segment;
                }
            }
            return null;
        }
        int low = 0;
        int high = segments.size() - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            LoadSegment segment = segments.get(mid);
            if (segment.containsFileBacked(vaddr)) {
                return segment;
            }
            if (vaddr < segment.vaddr()) {
                high = mid - 1;
            } else {
                low = mid + 1;
            }
        }
        return null;
    }

    /**
     * The functions .dynsym and .symtab define (in that order; an import or an object does not count) whose names
     * start with one of {@code prefixes}, at most {@code maxNames} of them. Works on {@link #openHeaders}'s result:
     * the first bytes of each name are compared in place and only a match is copied, so a 100 MB program's
     * hundreds of thousands of symbols cost milliseconds, not the decoding {@link #open} does (which takes a
     * second on node's). What tells a process's objects that hold llama.cpp/ggml code ({@link GgmlCodeFinder}).
     */
    public Set<String> definedFunctionsStartingWith(List<String> prefixes, int maxNames) throws TargetException {
        List<byte[]> wanted = prefixes.stream().map(prefix -> prefix.getBytes(StandardCharsets.UTF_8)).toList();
        Set<String> names = new java.util.TreeSet<>();
        for (int pass = 0; pass < 2; pass++) {
            int type = pass == 0 ? ElfSection.SHT_DYNSYM : ElfSection.SHT_SYMTAB;
            for (ElfSection table : sections) {
                if (table.type() != type || !hasSymbolEntries(table)) {
                    continue;
                }
                ElfSection strings = sections.get(table.link());
                long count = entries(table, "symbol");
                for (long i = 1; i < count && names.size() < maxNames; i++) {
                    checkTime(i);
                    long at = table.fileOffset() + i * table.entrySizeBytes();
                    int info = Byte.toUnsignedInt(file.get(ValueLayout.JAVA_BYTE, at + 4));
                    if ((info & 0xf) != STT_FUNC || u16(at + 6) == SHN_UNDEF) {
                        continue;
                    }
                    long nameIndex = Integer.toUnsignedLong(file.get(U32, at));
                    for (byte[] prefix : wanted) {
                        if (nameStartsWith(strings, nameIndex, prefix)) {
                            names.add(string(strings, nameIndex));
                            break;
                        }
                    }
                }
            }
        }
        return names;
    }

    /** Whether the string at {@code index} of {@code strings} begins with {@code prefix} (read as {@link #nameIs}). */
    private boolean nameStartsWith(ElfSection strings, long index, byte[] prefix) {
        long tableEnd = Math.min(strings.sizeBytes(), file.byteSize() - Math.max(0, strings.fileOffset()));
        if (strings.fileOffset() < 0 || index < 0 || index > tableEnd - prefix.length) {
            return false;
        }
        long at = strings.fileOffset() + index;
        for (int b = 0; b < prefix.length; b++) {
            if (file.get(ValueLayout.JAVA_BYTE, at + b) != prefix[b]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether .dynsym defines a function named each of {@code names} (an import, an object or a local does not
     * count). Works on any opening, {@link #openHeaders}'s too: the names are compared in place, no symbol is
     * decoded. Telling libllama among a target's libraries by decoding its thousands of C++ exports was a
     * noticeable part of every start (measurements.md, "Where a start's time goes").
     */
    public boolean exportsFunctions(Set<String> names) throws TargetException {
        List<byte[]> wanted = names.stream().map(name -> name.getBytes(StandardCharsets.UTF_8)).toList();
        boolean[] found = new boolean[wanted.size()];
        int missing = wanted.size();
        for (ElfSection table : sections) {
            if (missing == 0) {
                break;
            }
            if (table.type() != ElfSection.SHT_DYNSYM || !hasSymbolEntries(table)) {
                continue;
            }
            ElfSection strings = sections.get(table.link());
            long count = entries(table, "symbol");
            for (long i = 1; i < count && missing > 0; i++) {
                checkTime(i);
                long at = table.fileOffset() + i * table.entrySizeBytes();
                int info = Byte.toUnsignedInt(file.get(ValueLayout.JAVA_BYTE, at + 4));
                if ((info & 0xf) != STT_FUNC || u16(at + 6) == SHN_UNDEF) {
                    continue;
                }
                long nameIndex = Integer.toUnsignedLong(file.get(U32, at));
                for (int w = 0; w < found.length; w++) {
                    if (!found[w] && nameIs(strings, nameIndex, wanted.get(w))) {
                        found[w] = true;
                        missing--;
                    }
                }
            }
        }
        return missing == 0;
    }

    /**
     * Whether the string at {@code index} of {@code strings} is {@code name} and its NUL: bytes outside the table
     * or the file compare unequal (at most name.length + 1 bytes are read, so no table makes this costly).
     */
    private boolean nameIs(ElfSection strings, long index, byte[] name) {
        long tableEnd = Math.min(strings.sizeBytes(), file.byteSize() - Math.max(0, strings.fileOffset()));
        if (strings.fileOffset() < 0 || index < 0 || index > tableEnd - name.length - 1) {
            return false;
        }
        long at = strings.fileOffset() + index;
        for (int b = 0; b < name.length; b++) {
            if (file.get(ValueLayout.JAVA_BYTE, at + b) != name[b]) {
                return false;
            }
        }
        return file.get(ValueLayout.JAVA_BYTE, at + name.length) == 0;
    }

    private List<ElfSymbol> readFunctions() throws TargetException {
        // .dynsym first, so a function in both tables is reported as the exported (strip-proof) one.
        Map<String, ElfSymbol> byNameAndAddress = new LinkedHashMap<>();
        for (ElfSection section : sections) {
            if (section.type() == ElfSection.SHT_DYNSYM) {
                readFunctions(section, SymbolTable.DYNSYM, byNameAndAddress);
            }
        }
        for (ElfSection section : sections) {
            if (section.type() == ElfSection.SHT_SYMTAB) {
                readFunctions(section, SymbolTable.SYMTAB, byNameAndAddress);
            }
        }
        return List.copyOf(byNameAndAddress.values());
    }

    /** Whether symbol table {@code table} links a string table and has entries; entries of the wrong size are corrupt. */
    private boolean hasSymbolEntries(ElfSection table) throws TargetException {
        if (table.link() <= 0 || table.link() >= sections.size() || table.entrySizeBytes() == 0) {
            return false;
        }
        if (table.entrySizeBytes() < SYMBOL_BYTES || table.entrySizeBytes() > MAX_ENTRY_BYTES) {
            throw corrupt(table.name() + " has symbols of " + table.entrySizeBytes() + " bytes (an ELF64 one has "
                    + SYMBOL_BYTES + ")");
        }
        return true;
    }

    private void readFunctions(ElfSection table, SymbolTable kind, Map<String, ElfSymbol> into)
            throws TargetException {
        if (!hasSymbolEntries(table)) {
            return;
        }
        ElfSection strings = sections.get(table.link());
        long count = entries(table, "symbol");
        for (long i = 1; i < count; i++) {
            checkTime(i);
            long at = table.fileOffset() + i * table.entrySizeBytes();
            int info = Byte.toUnsignedInt(file.get(ValueLayout.JAVA_BYTE, at + 4));
            int sectionIndex = u16(at + 6);
            if ((info & 0xf) != STT_FUNC || sectionIndex == SHN_UNDEF) {
                continue;
            }
            String name = string(strings, Integer.toUnsignedLong(file.get(U32, at)));
            long value = file.get(U64, at + 8);
            if (into.size() >= MAX_FUNCTIONS) {
                throw corrupt("more than " + MAX_FUNCTIONS + " functions in its symbol tables");
            }
            into.putIfAbsent(name + "@" + value, new ElfSymbol(name, value, file.get(U64, at + 16),
                    SymbolBinding.fromElf(info >>> 4), kind));
        }
    }

    private static Map<String, List<ElfSymbol>> indexByName(List<ElfSymbol> functions) {
        Map<String, List<ElfSymbol>> index = new HashMap<>(functions.size() * 2);
        for (ElfSymbol symbol : functions) {
            index.computeIfAbsent(symbol.name(), n -> new ArrayList<>(1)).add(symbol);
        }
        index.replaceAll((name, symbols) -> List.copyOf(symbols));
        return index;
    }

    private DynamicInfo readDynamic() throws TargetException {
        // From PT_DYNAMIC rather than the .dynamic section, so files without section headers work too.
        ProgramHeader dynamicHeader = programHeaders().stream().filter(h -> h.type() == PT_DYNAMIC).findFirst()
                .orElse(null);
        if (dynamicHeader == null) {
            return DynamicInfo.NONE;
        }
        List<Long> needed = new ArrayList<>();
        Long soname = null, runpath = null, rpath = null, stringsVaddr = null;
        long stringsSize = -1;
        long from = dynamicHeader.fileOffset();
        long size = dynamicHeader.fileSize();
        requireInFile(from, size, "PT_DYNAMIC");
        for (long at = from; at + DYNAMIC_ENTRY_BYTES <= from + size; at += DYNAMIC_ENTRY_BYTES) {
            long tag = file.get(U64, at);
            long value = file.get(U64, at + 8);
            if (tag == DT_NULL) {
                break;
            }
            if (tag == DT_NEEDED) {
                if (needed.size() >= MAX_NEEDED) {
                    throw corrupt("more than " + MAX_NEEDED + " DT_NEEDED entries");
                }
                needed.add(value);
            } else if (tag == DT_STRSZ) {
                stringsSize = value;
            } else if (tag == DT_STRTAB) {
                stringsVaddr = value;
            } else if (tag == DT_SONAME) {
                soname = value;
            } else if (tag == DT_RUNPATH) {
                runpath = value;
            } else if (tag == DT_RPATH) {
                rpath = value;
            }
        }
        if (stringsVaddr == null) {
            return DynamicInfo.NONE;
        }
        long strings = fileOffsetOf(stringsVaddr);
        long stringsBytes = stringsSize >= 0 ? stringsSize : file.byteSize() - strings;
        List<String> neededNames = new ArrayList<>(needed.size());
        for (long n : needed) {
            neededNames.add(string(strings, stringsBytes, n));
        }
        return new DynamicInfo(
                neededNames,
                soname == null ? Optional.empty() : Optional.of(string(strings, stringsBytes, soname)),
                searchPath(runpath == null ? null : string(strings, stringsBytes, runpath)),
                searchPath(rpath == null ? null : string(strings, stringsBytes, rpath)));
    }

    // Empty elements are kept: ld.so searches the working directory for them (a trailing ':' is common).
    private static List<String> searchPath(String joined) {
        return joined == null || joined.isEmpty() ? List.of() : List.of(joined.split(":", -1));
    }

    private Optional<String> readBuildId() throws TargetException {
        Set<Long> seen = new HashSet<>();
        List<long[]> noteAreas = new ArrayList<>();
        for (ElfSection section : sections) {
            if (section.type() == ElfSection.SHT_NOTE && seen.add(section.fileOffset())) {
                noteAreas.add(new long[] {section.fileOffset(), section.sizeBytes()});
            }
        }
        for (ProgramHeader header : programHeaders()) {
            if (header.type() == PT_NOTE && seen.add(header.fileOffset())) {
                noteAreas.add(new long[] {header.fileOffset(), header.fileSize()});
            }
        }
        for (long[] area : noteAreas) {
            if (!inFile(area[0], area[1])) {
                continue; // a note area outside the file holds no build-id to read
            }
            long at = area[0];
            long end = area[0] + area[1];
            while (at + 12 <= end) {
                long nameSize = Integer.toUnsignedLong(file.get(U32, at));
                long descSize = Integer.toUnsignedLong(file.get(U32, at + 4));
                int type = file.get(U32, at + 8);
                long name = at + 12;
                long desc = name + align4(nameSize);
                if (desc + descSize > end) {
                    break;
                }
                if (type == NT_GNU_BUILD_ID && nameSize == 4 && descSize <= MAX_BUILD_ID_BYTES
                        && "GNU".equals(string(name, 4, 0))) {
                    return Optional.of(HexFormat.of().formatHex(file.asSlice(desc, descSize).toArray(ValueLayout.JAVA_BYTE)));
                }
                at = desc + align4(descSize);
            }
        }
        return Optional.empty();
    }

    private static long align4(long n) {
        return (n + 3) & ~3L;
    }

    private int u16(long offset) {
        return Short.toUnsignedInt(file.get(U16, offset));
    }

    /** The largest sh_entsize accepted for a table of fixed-size entries (symbols, relocations). */
    private static final long MAX_ENTRY_BYTES = 1024;

    /** The number of entries of a table section, checked to lie in the file. */
    private long entries(ElfSection table, String what) throws TargetException {
        requireInFile(table.fileOffset(), table.sizeBytes(), table.name());
        return table.sizeBytes() / table.entrySizeBytes();
    }

    private boolean inFile(long offset, long length) {
        return offset >= 0 && length >= 0 && offset <= file.byteSize() && length <= file.byteSize() - offset;
    }

    private void requireInFile(long offset, long length, String what) throws TargetException {
        if (!inFile(offset, length)) {
            throw corrupt(what + " (" + Long.toUnsignedString(length) + " bytes at offset 0x"
                    + Long.toHexString(offset) + ") lies outside the file (" + file.byteSize() + " bytes)");
        }
    }

    /** Every 64 Ki entries of a long table: stop when the scan's time limit interrupted this thread. */
    private void checkTime(long entry) throws TargetException {
        if ((entry & 0xffff) == 0 && Thread.currentThread().isInterrupted()) {
            throw new TargetException(path + ": reading it was interrupted (time limit)");
        }
    }

    private TargetException corrupt(String why) {
        return new TargetException("corrupt ELF file " + path + ": " + why);
    }

    /** The NUL-terminated string at {@code index} of the string table section {@code table}. */
    private String string(ElfSection table, long index) throws TargetException {
        return string(table.fileOffset(), table.sizeBytes(), index);
    }

    /**
     * The NUL-terminated string at {@code index} of the string table of {@code tableBytes} bytes at file offset
     * {@code tableOffset}: it must end inside the table and inside the file, and every byte scanned counts
     * against the file's string budget, so no table layout can make name lookups quadratic.
     */
    private String string(long tableOffset, long tableBytes, long index) throws TargetException {
        if (tableOffset < 0 || tableBytes < 0 || index < 0 || index >= tableBytes
                || tableOffset > file.byteSize() - index) {
            throw corrupt("a name at index " + Long.toUnsignedString(index) + " outside its string table");
        }
        long start = tableOffset + index;
        long end = Math.min(file.byteSize(), tableOffset + Math.min(tableBytes, file.byteSize()));
        for (long at = start; at < end; at++) {
            if (file.get(ValueLayout.JAVA_BYTE, at) == 0) {
                stringBytesLeft -= at - start + 1;
                if (stringBytesLeft < 0) {
                    throw corrupt("its names add up to more than " + MAX_STRING_BYTES_SCANNED + " bytes");
                }
                return new String(file.asSlice(start, at - start).toArray(ValueLayout.JAVA_BYTE),
                        StandardCharsets.UTF_8);
            }
            if (at - start >= stringBytesLeft) {
                throw corrupt("its names add up to more than " + MAX_STRING_BYTES_SCANNED + " bytes");
            }
        }
        throw corrupt("a name at index " + index + " runs past the end of its string table");
    }
}
