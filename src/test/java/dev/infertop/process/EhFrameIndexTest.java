package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The function ranges read from .eh_frame_hdr, against two oracles that do not share its code: binutils' readelf,
 * which decodes every FDE of .eh_frame itself, and the .symtab that gcc wrote (a function's st_size is the span
 * its .cfi_startproc/.cfi_endproc cover).
 */
class EhFrameIndexTest {
    private static final Duration QUICK = Duration.ofSeconds(30);
    private static final int SH_SIZE = 0x20;

    /** Functions of every linkage, and one written in assembly without CFI, which therefore has no FDE. */
    static final String SOURCE = """
            #include <stdlib.h>
            extern long sink(long);
            __asm__(".text\\n.globl no_cfi\\n.type no_cfi,@function\\nno_cfi:\\n ret\\n.size no_cfi, .-no_cfi\\n");
            long exported(long a) { return sink(a) + 1; }
            static __attribute__((noinline, noclone)) long local_helper(long a) { return sink(a * 3) * 2; }
            __attribute__((visibility("hidden"), noinline)) long hidden_helper(long a) { return sink(a - 3) * 5; }
            long checked(long a) {
                if (__builtin_expect(a < 0, 0)) { sink(-a); sink(a * 5); abort(); }
                return local_helper(a) + local_helper(a + 1) + hidden_helper(a);
            }
            long leaf(long a, long b) { return a * b + 7; }
            """;
    static final List<String> WITH_FDE = List.of("exported", "local_helper", "hidden_helper", "checked", "leaf");

    @TempDir
    Path dir;

    private Path compile() throws Exception {
        Path source = dir.resolve("eh.c");
        Files.writeString(source, SOURCE);
        Path library = dir.resolve("libeh.so");
        TestTools.run("cc", "-shared", "-fPIC", "-O2", "-o", library.toString(), source.toString());
        return library;
    }

    /** Every FDE readelf finds in .eh_frame with a non-empty range, as (pc_begin, pc_end - pc_begin), ascending. */
    static List<EhFrameIndex.Range> readelfFdes(Path file) throws Exception {
        Pattern fde = Pattern.compile("\\bFDE cie=[0-9a-f]+ pc=([0-9a-f]+)\\.\\.([0-9a-f]+)$");
        List<EhFrameIndex.Range> ranges = new ArrayList<>();
        for (String line : TestTools.run("readelf", "--debug-dump=frames", file.toString()).split("\n")) {
            Matcher m = fde.matcher(line.strip());
            if (m.find()) {
                long begin = Long.parseUnsignedLong(m.group(1), 16);
                long end = Long.parseUnsignedLong(m.group(2), 16);
                if (end > begin) {
                    ranges.add(new EhFrameIndex.Range(begin, end - begin));
                }
            }
        }
        ranges.sort(java.util.Comparator.comparingLong(EhFrameIndex.Range::vaddr));
        return ranges;
    }

    private static void assertAscendingAndDisjoint(List<EhFrameIndex.Range> ranges, Path file) {
        for (int i = 1; i < ranges.size(); i++) {
            EhFrameIndex.Range previous = ranges.get(i - 1);
            EhFrameIndex.Range range = ranges.get(i);
            assertTrue(previous.vaddr() + previous.sizeBytes() <= range.vaddr(),
                    file + ": ranges out of order or overlapping: " + previous + " then " + range);
        }
    }

    /** .text functions whose range is exactly their symbol's, those whose range differs, those without an FDE. */
    private record SymbolCheck(int exact, List<String> mismatches, int withoutFde) {}

    /**
     * Every FUNC symbol of size > 0 in .text that starts an FDE (readelf's): its index range must be exactly
     * (st_value, st_size) and startingAt must find it.
     */
    private static SymbolCheck checkSymbols(ElfFile elf, EhFrameIndex index, List<EhFrameIndex.Range> fdes) {
        ElfSection text = elf.section(".text").orElseThrow();
        Set<Long> fdeStarts = new HashSet<>();
        fdes.forEach(r -> fdeStarts.add(r.vaddr()));
        Set<Long> seen = new HashSet<>();
        int exact = 0;
        int withoutFde = 0;
        List<String> mismatches = new ArrayList<>();
        for (ElfSymbol function : elf.functions()) {
            if (function.sizeBytes() <= 0 || function.vaddr() < text.vaddr()
                    || function.vaddr() >= text.vaddr() + text.sizeBytes() || !seen.add(function.vaddr())) {
                continue; // aliases (one address, several names) are counted once
            }
            if (!fdeStarts.contains(function.vaddr())) {
                withoutFde++;
                continue;
            }
            Optional<EhFrameIndex.Range> found = index.startingAt(function.vaddr());
            if (found.equals(Optional.of(new EhFrameIndex.Range(function.vaddr(), function.sizeBytes())))) {
                exact++;
            } else {
                mismatches.add(function.name() + " 0x" + Long.toHexString(function.vaddr()) + "+" + function.sizeBytes()
                        + " -> " + found);
            }
        }
        return new SymbolCheck(exact, mismatches, withoutFde);
    }

    @Test
    void compiledLibraryRangesAreExactlyReadelfsFdesAndTheSymbolSizes() throws Exception {
        Path library = compile();
        List<EhFrameIndex.Range> fdes = readelfFdes(library);
        try (ElfFile elf = ElfFile.open(library)) {
            EhFrameIndex index = EhFrameIndex.of(elf);
            assertEquals(fdes, index.ranges(), "index vs readelf --debug-dump=frames");
            for (String name : WITH_FDE) {
                ElfSymbol function = elf.function(name).orElseThrow(() -> new AssertionError(name + " not in symtab"));
                assertEquals(Optional.of(new EhFrameIndex.Range(function.vaddr(), function.sizeBytes())),
                        index.startingAt(function.vaddr()), name);
            }
            ElfSymbol noCfi = elf.function("no_cfi").orElseThrow();
            assertEquals(Optional.empty(), index.startingAt(noCfi.vaddr()), "no_cfi has no FDE, so no range");
            assertTrue(index.ranges().stream().noneMatch(r -> r.contains(noCfi.vaddr())),
                    "no range covers the CFI-less no_cfi: " + index.ranges());
            ElfSymbol leaf = elf.function("leaf").orElseThrow();
            assertEquals(Optional.empty(), index.startingAt(leaf.vaddr() + 1), "only exact starts are found");
            SymbolCheck check = checkSymbols(elf, index, fdes);
            assertEquals(List.of(), check.mismatches());
            assertEquals(WITH_FDE.size(), check.exact(), "one exact match per C function");
        }
    }

    @Test
    void strippingKeepsEveryRange() throws Exception {
        Path library = compile();
        Path stripped = TestTools.strippedCopy(library, dir);
        try (ElfFile full = ElfFile.open(library); ElfFile bare = ElfFile.open(stripped)) {
            assertTrue(bare.isStripped(), "strip --strip-all left a .symtab");
            List<EhFrameIndex.Range> ranges = EhFrameIndex.of(full).ranges();
            assertTrue(ranges.size() >= WITH_FDE.size(), ranges.toString());
            assertEquals(ranges, EhFrameIndex.of(bare).ranges());
        }
    }

    @Test
    void llamaLibrariesRangesMatchEverySymbolWithAnFde() throws Exception {
        TestTools.requireSourceBuild();
        List<Path> libraries = new ArrayList<>(List.of(TestTools.SOURCE_BUILD_BIN.resolve("libggml-cpu.so"),
                TestTools.SOURCE_BUILD_BIN.resolve("libggml-base.so")));
        for (String name : List.of("libggml-cpu-x64.so", "libggml-cpu-haswell.so", "libggml-base.so")) {
            Path prebuilt = TestTools.PROVISIONED_PREBUILT.resolve(name);
            if (Files.isRegularFile(prebuilt)) {
                libraries.add(prebuilt);
            }
        }
        for (Path library : libraries) {
            List<EhFrameIndex.Range> fdes = readelfFdes(library);
            try (ElfFile elf = ElfFile.open(library)) {
                assertTrue(!elf.isStripped(), library + " is stripped: no symtab oracle");
                EhFrameIndex index = EhFrameIndex.of(elf);
                assertEquals(fdes, index.ranges(), library + ": index vs readelf --debug-dump=frames");
                assertAscendingAndDisjoint(index.ranges(), library);
                SymbolCheck check = checkSymbols(elf, index, fdes);
                assertEquals(List.of(), check.mismatches(), library + ": symbols whose FDE range differs");
                // libggml-cpu has ~600 functions of size > 0 in .text, libggml-base ~1000; gcc gives each an FDE
                assertTrue(check.exact() >= 500, library + ": only " + check.exact() + " exact matches");
                assertTrue(check.exact() >= 100 * check.withoutFde(), library + ": " + check.exact()
                        + " exact matches but " + check.withoutFde() + " .text functions without an FDE");
                for (String exported : List.of("ggml_graph_compute", "ggml_barrier", "ggml_init")) {
                    Optional<ElfSymbol> symbol = elf.function(exported);
                    if (symbol.isPresent()) {
                        assertEquals(Optional.of(new EhFrameIndex.Range(symbol.get().vaddr(),
                                symbol.get().sizeBytes())), index.startingAt(symbol.get().vaddr()), library + " " + exported);
                    }
                }
            }
        }
    }

    /** A copy of {@code library} with {@code bytes} written over .eh_frame_hdr from {@code offsetInSection}. */
    private static Path overwriteHeader(Path library, int offsetInSection, byte[] bytes, Path into) throws Exception {
        long fileOffset;
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSection hdr = elf.section(".eh_frame_hdr").orElseThrow();
            assertTrue(offsetInSection + bytes.length <= hdr.sizeBytes(), "patch past .eh_frame_hdr");
            fileOffset = hdr.fileOffset() + offsetInSection;
        }
        byte[] file = Files.readAllBytes(library);
        System.arraycopy(bytes, 0, file, (int) fileOffset, bytes.length);
        Files.write(into, file);
        return into;
    }

    /** The index of {@code file}: ranges, or null where it was refused with a TargetException (and only that). */
    private static List<EhFrameIndex.Range> indexOrRefusal(Path file) {
        return assertTimeoutPreemptively(QUICK, () -> {
            try (ElfFile elf = ElfFile.open(file)) {
                return EhFrameIndex.of(elf).ranges();
            } catch (TargetException refused) {
                return null;
            } catch (RuntimeException | Error e) {
                throw new AssertionError(file + ": threw " + e, e);
            }
        });
    }

    private static void assertShorterSubset(List<EhFrameIndex.Range> original, List<EhFrameIndex.Range> damaged,
                                            String what) {
        if (damaged == null) {
            return; // a TargetException: allowed
        }
        assertTrue(damaged.size() < original.size(), what + ": " + damaged.size() + " ranges of " + original.size());
        assertTrue(original.containsAll(damaged), what + ": a range that was not in the intact file: " + damaged);
        assertAscendingAndDisjoint(damaged, Path.of(what));
    }

    @Test
    void zeroedOrTruncatedHeaderGivesNoIndex() throws Exception {
        Path library = compile();
        long hdrBytes;
        try (ElfFile elf = ElfFile.open(library)) {
            hdrBytes = elf.section(".eh_frame_hdr").orElseThrow().sizeBytes();
        }
        Path zeroed = overwriteHeader(library, 0, new byte[(int) hdrBytes], dir.resolve("zeroed.so"));
        assertEquals(List.of(), indexOrRefusal(zeroed), "an all-zero .eh_frame_hdr (version 0)");
        // the count field (bytes 8..11) set past the section and past MAX_FUNCTIONS
        for (int count : new int[] {(int) (hdrBytes / 8) + 1, EhFrameIndex.MAX_FUNCTIONS + 1, -1}) {
            byte[] le = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(count).array();
            Path counted = overwriteHeader(library, 8, le, dir.resolve("count.so"));
            assertEquals(List.of(), indexOrRefusal(counted), "fde_count " + Integer.toUnsignedString(count));
        }
        Path zeroCount = overwriteHeader(library, 8, new byte[4], dir.resolve("count0.so"));
        assertEquals(List.of(), indexOrRefusal(zeroCount), "fde_count 0");
        // the section header says 8 bytes: less than the 12-byte header
        Path cut = HostileElfTest.patchSection(library, ".eh_frame_hdr", SH_SIZE, 8, dir.resolve("cut.so"));
        assertEquals(List.of(), indexOrRefusal(cut), ".eh_frame_hdr of 8 bytes");
        // an encoding other than the one read (table as udata4 instead of datarel sdata4)
        Path encoding = overwriteHeader(library, 3, new byte[] {0x03}, dir.resolve("enc.so"));
        assertEquals(List.of(), indexOrRefusal(encoding), "table_enc udata4");
    }

    @Test
    void garbledTableGivesAShorterIndexOrATargetException() throws Exception {
        Path library = compile();
        List<EhFrameIndex.Range> original = indexOrRefusal(library);
        assertTrue(original != null && original.size() >= WITH_FDE.size(), "intact: " + original);
        long hdrBytes;
        long hdrFileOffset;
        try (ElfFile elf = ElfFile.open(library)) {
            hdrBytes = elf.section(".eh_frame_hdr").orElseThrow().sizeBytes();
            hdrFileOffset = elf.section(".eh_frame_hdr").orElseThrow().fileOffset();
        }
        byte[] intact = Files.readAllBytes(library);
        int tableBytes = original.size() * 8;
        assertEquals(12 + tableBytes, hdrBytes, "header + one 8-byte entry per FDE");
        Random random = new Random(20261127);
        Path damaged = dir.resolve("garbled.so");
        int refusals = 0;
        for (int round = 0; round < 200; round++) {
            int from = 12 + random.nextInt(tableBytes);
            byte[] noise = new byte[1 + random.nextInt(12 + tableBytes - from)];
            random.nextBytes(noise);
            if (round % 4 == 0) {
                java.util.Arrays.fill(noise, (byte) 0);
            }
            // a byte already equal is no damage: make the first one differ so every round changes an entry
            if (noise[0] == intact[(int) hdrFileOffset + from]) {
                noise[0] = (byte) ~noise[0];
            }
            List<EhFrameIndex.Range> result = indexOrRefusal(overwriteHeader(library, from, noise, damaged));
            refusals += result == null ? 1 : 0;
            assertShorterSubset(original, result, "round " + round + ", " + noise.length + " bytes at +" + from);
        }
        assertTrue(refusals < 200, "every garbled table was refused: the shorter-index path never ran");
    }

    @Test
    void twoEntriesSwappedEndTheIndexAtTheFirstOutOfOrder() throws Exception {
        Path library = compile();
        List<EhFrameIndex.Range> original = indexOrRefusal(library);
        long at;
        try (ElfFile elf = ElfFile.open(library)) {
            at = elf.section(".eh_frame_hdr").orElseThrow().fileOffset();
        }
        byte[] file = Files.readAllBytes(library);
        int last = original.size() - 1;
        byte[] entry = java.util.Arrays.copyOfRange(file, (int) at + 12 + (last - 1) * 8, (int) at + 12 + last * 8);
        System.arraycopy(file, (int) at + 12 + last * 8, file, (int) at + 12 + (last - 1) * 8, 8);
        System.arraycopy(entry, 0, file, (int) at + 12 + last * 8, 8);
        Path swapped = dir.resolve("swapped.so");
        Files.write(swapped, file);
        // the second-to-last slot now holds the last function; the last slot, lower, is out of order: index ends
        List<EhFrameIndex.Range> expected = new ArrayList<>(original.subList(0, last - 1));
        expected.add(original.get(last));
        assertEquals(expected, indexOrRefusal(swapped));
    }

    @Test
    void anFdeWhosePcBeginDisagreesWithTheTableIsLeftOut() throws Exception {
        Path library = compile();
        List<EhFrameIndex.Range> original = indexOrRefusal(library);
        long fdeFileOffset;
        int victim = original.size() / 2;
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSection hdr = elf.section(".eh_frame_hdr").orElseThrow();
            byte[] row = elf.readBytesAtVaddr(hdr.vaddr() + 12 + victim * 8L, 8);
            long fde = hdr.vaddr() + ByteBuffer.wrap(row).order(ByteOrder.LITTLE_ENDIAN).getInt(4);
            fdeFileOffset = elf.fileOffsetOf(fde);
        }
        byte[] file = Files.readAllBytes(library);
        ByteBuffer bytes = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        int pcBegin = (int) fdeFileOffset + 8;
        bytes.putInt(pcBegin, bytes.getInt(pcBegin) + 16); // the FDE now claims a start 16 bytes later
        Path moved = dir.resolve("moved.so");
        Files.write(moved, file);
        List<EhFrameIndex.Range> expected = new ArrayList<>(original);
        expected.remove(victim);
        assertEquals(expected, indexOrRefusal(moved), "FDE " + victim + " disagrees with the table");
    }

    @Test
    void aLibraryWithoutEhFrameHdrHasNoIndex() throws Exception {
        Path source = dir.resolve("eh.c");
        Files.writeString(source, SOURCE);
        Path library = dir.resolve("libnohdr.so");
        TestTools.run("cc", "-shared", "-fPIC", "-O2", "-Wl,--no-eh-frame-hdr", "-o", library.toString(),
                source.toString());
        try (ElfFile elf = ElfFile.open(library)) {
            if (elf.section(".eh_frame_hdr").isPresent()) {
                fail("the linker wrote .eh_frame_hdr despite --no-eh-frame-hdr");
            }
            assertEquals(List.of(), EhFrameIndex.of(elf).ranges());
        }
    }
}
