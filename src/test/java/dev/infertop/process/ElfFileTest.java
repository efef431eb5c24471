package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ElfFileTest {
    @TempDir
    Path dir;

    @Test
    void tinyLibraryHasExportedAndLocalFunctionsWithTheirTables() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        try (ElfFile elf = ElfFile.open(library)) {
            assertEquals(Machine.X86_64, elf.machine());
            assertFalse(elf.isStripped());
            assertEquals(List.of("libtiny.so.1"), elf.soname().stream().toList());
            assertTrue(elf.needed().contains("libc.so.6") || elf.needed().isEmpty(), elf.needed().toString());

            ElfSymbol exported = elf.function("keeps_six").orElseThrow();
            assertEquals(SymbolTable.DYNSYM, exported.table());
            assertEquals(SymbolBinding.GLOBAL, exported.binding());
            assertTrue(exported.sizeBytes() > 0);

            ElfSymbol clone = elf.function("scaled.constprop.0").orElseThrow();
            assertEquals(SymbolTable.SYMTAB, clone.table());
            assertEquals(SymbolBinding.LOCAL, clone.binding());
            assertEquals(List.of(clone), elf.functionAndClones("scaled"));
            assertEquals("scaled", clone.baseName());
            assertTrue(elf.function("scaled").isEmpty(), "only the clone exists");
            assertTrue(elf.function("sink").isEmpty(), "undefined symbols are not functions of this file");
        }
    }

    @Test
    void openingForHeadersDecodesNoSymbolYetTellsExportedFunctions() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        try (ElfFile full = ElfFile.open(library); ElfFile headers = ElfFile.openHeaders(library)) {
            // Headers: the identity and the dynamic section as a full decoding has them; no function lookup.
            assertEquals(full.buildId(), headers.buildId());
            assertEquals(full.soname(), headers.soname());
            assertEquals(full.needed(), headers.needed());
            assertEquals(full.machine(), headers.machine());
            assertThrows(IllegalStateException.class, () -> headers.function("keeps_six"));
            assertThrows(IllegalStateException.class, headers::functions);
            // Exports, compared in place: .dynsym's defined functions by their whole names only.
            for (ElfFile elf : List.of(full, headers)) {
                assertTrue(elf.exportsFunctions(Set.of("keeps_six", "tail_jump")));
                assertTrue(elf.exportsFunctions(Set.of()));
                assertFalse(elf.exportsFunctions(Set.of("keeps_six", "sink")), "an import is no export");
                assertTrue(full.function("scaled.constprop.0").isPresent());
                assertFalse(elf.exportsFunctions(Set.of("scaled.constprop.0")), "a local clone is no export");
                assertFalse(elf.exportsFunctions(Set.of("keeps_si")), "a prefix is another name");
                assertFalse(elf.exportsFunctions(Set.of("keeps_six_")), "so is a longer one");
            }
        }
    }

    @Test
    void symbolsMatchReadelf() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, false);
        String readelf = TestTools.run("readelf", "-W", "--syms", library.toString());
        Pattern function = Pattern.compile("^\\s*\\d+: ([0-9a-f]+)\\s+(\\d+) FUNC\\s+(\\w+)\\s+\\w+\\s+(\\d+) (\\S+)$");
        try (ElfFile elf = ElfFile.open(library)) {
            int checked = 0;
            for (String line : readelf.split("\n")) {
                Matcher m = function.matcher(line);
                if (m.matches()) {
                    ElfSymbol symbol = elf.functionsNamed(m.group(5).replaceFirst("@.*", "")).getFirst();
                    assertEquals(Long.parseLong(m.group(1), 16), symbol.vaddr(), line);
                    assertEquals(Long.parseLong(m.group(2)), symbol.sizeBytes(), line);
                    assertEquals(m.group(3), symbol.binding().name(), line);
                    checked++;
                }
            }
            assertTrue(checked >= 8, "readelf listed " + checked + " defined functions");
        }
    }

    @Test
    void strippedCopyKeepsOnlyDynsym() throws Exception {
        Path stripped = TestTools.strippedCopy(TestTools.compileTinyLibrary(dir, true), dir);
        try (ElfFile elf = ElfFile.open(stripped)) {
            assertTrue(elf.isStripped());
            assertTrue(elf.function("keeps_six").isPresent());
            assertTrue(elf.functionAndClones("scaled").isEmpty(), "local clones vanish with strip");
            assertTrue(elf.functions().stream().allMatch(s -> s.table() == SymbolTable.DYNSYM));
        }
    }

    @Test
    void buildIdMatchesReadelf() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        Matcher m = Pattern.compile("Build ID: ([0-9a-f]+)").matcher(TestTools.run("readelf", "-n", library.toString()));
        assertTrue(m.find());
        try (ElfFile elf = ElfFile.open(library)) {
            assertEquals(m.group(1), elf.buildId().orElseThrow());
        }
    }

    @Test
    void fileOffsetsAgreeWithSectionHeadersOfLibc() throws Exception {
        assertFileOffsetsAgreeWithSectionHeaders(TestTools.LIBC);
    }

    @Test
    void fileOffsetsAgreeWithSectionHeadersOfTinyLibrary() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        assertFileOffsetsAgreeWithSectionHeaders(library);
        try (ElfFile elf = ElfFile.open(library)) {
            // its writable segment is loaded a page above its file offset: there the conversion is not identity
            assertTrue(elf.loadSegments().stream().anyMatch(s -> s.vaddr() != s.fileOffset()), elf.loadSegments().toString());
        }
    }

    private static void assertFileOffsetsAgreeWithSectionHeaders(Path file) throws Exception {
        try (ElfFile elf = ElfFile.open(file)) {
            int checked = 0;
            for (ElfSection section : elf.sections()) {
                boolean allocatedWithBytes = (section.flags() & 2) != 0 && section.type() != ElfSection.SHT_NOBITS
                        && section.sizeBytes() > 0;
                if (allocatedWithBytes) {
                    assertEquals(section.fileOffset(), elf.fileOffsetOf(section.vaddr()), section.name());
                    checked++;
                }
            }
            assertTrue(checked > 10, file + ": " + checked + " sections checked");
            long beyondEverything = elf.loadSegments().stream().mapToLong(s -> s.vaddr() + s.memorySizeBytes()).max()
                    .orElseThrow() + 0x1000;
            TargetException e = assertThrows(TargetException.class, () -> elf.fileOffsetOf(beyondEverything));
            assertEquals("address 0x" + Long.toHexString(beyondEverything) + " is in no loaded part of " + file,
                    e.getMessage());
        }
    }

    @Test
    void libcHasDynamicInfoAndFunctions() throws Exception {
        try (ElfFile elf = ElfFile.open(TestTools.LIBC)) {
            assertEquals("libc.so.6", elf.soname().orElseThrow());
            assertTrue(elf.needed().contains("ld-linux-x86-64.so.2"), elf.needed().toString());
            ElfSymbol malloc = elf.function("malloc").orElseThrow();
            byte[] code = elf.readBytesAtVaddr(malloc.vaddr(), 4);
            assertEquals(4, code.length);
            byte[] objdump = TestTools.disassemble(TestTools.LIBC, malloc.vaddr(), 4).getFirst().bytes();
            assertArrayEquals(java.util.Arrays.copyOf(objdump, Math.min(4, objdump.length)),
                    java.util.Arrays.copyOf(code, Math.min(4, objdump.length)));
            assertTrue(elf.buildId().isPresent());
        }
    }

    @Test
    void rejectsNonElfAndOtherClasses() throws Exception {
        Path text = Files.writeString(dir.resolve("notes.txt"), "hello, not an ELF file at all, but long enough to have a header......");
        TargetException notElf = assertThrows(TargetException.class, () -> ElfFile.open(text));
        assertEquals("not an ELF64 little-endian file: " + text, notElf.getMessage());

        Path empty = Files.createFile(dir.resolve("empty.so"));
        assertEquals("not an ELF64 little-endian file: " + empty,
                assertThrows(TargetException.class, () -> ElfFile.open(empty)).getMessage());

        Path missing = dir.resolve("missing.so");
        assertEquals("no such file: " + missing,
                assertThrows(TargetException.class, () -> ElfFile.open(missing)).getMessage());
    }

    @Test
    void acceptsAarch64AndRejectsOtherMachines() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        Path asAarch64 = withMachine(library, 183, "aarch64.so");
        try (ElfFile elf = ElfFile.open(asAarch64)) {
            assertEquals(Machine.AARCH64, elf.machine());
        }
        Path asRiscV = withMachine(library, 243, "riscv.so");
        TargetException e = assertThrows(TargetException.class, () -> ElfFile.open(asRiscV));
        assertEquals("unsupported machine (ELF e_machine 243) in " + asRiscV + ": only x86_64 and aarch64",
                e.getMessage());
        assertTrue(ElfFile.peekMachine(asRiscV).isEmpty());
        assertEquals(Machine.AARCH64, ElfFile.peekMachine(asAarch64).orElseThrow());
    }

    @Test
    void truncatedFileIsReportedNotThrownAsIndexError() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        Path truncated = dir.resolve("truncated.so");
        Files.write(truncated, java.util.Arrays.copyOf(Files.readAllBytes(library), 200));
        TargetException e = assertThrows(TargetException.class, () -> ElfFile.open(truncated));
        assertEquals("corrupt ELF file " + truncated + ": the section header table (1600 bytes at offset 0x3570)"
                + " lies outside the file (200 bytes)", e.getMessage().replaceAll("\\(\\d+ bytes at offset 0x[0-9a-f]+\\)",
                "(1600 bytes at offset 0x3570)"));
    }

    @Test
    void npmPrebuiltLibrariesHaveTheFunctionsInfertopProbes() throws Exception {
        TestTools.requireNpmPrebuilt();
        long started = System.nanoTime();
        try (ElfFile llama = ElfFile.open(TestTools.NPM_PREBUILT.resolve("libllama.v0.5.0.so"));
             ElfFile base = ElfFile.open(TestTools.NPM_PREBUILT.resolve("libggml-base.so"));
             ElfFile cpu = ElfFile.open(TestTools.NPM_PREBUILT.resolve("libggml-cpu-haswell.so"))) {
            assertTrue(llama.function("llama_decode").isPresent());
            assertTrue(base.function("ggml_backend_graph_compute_async").isPresent());
            assertFalse(cpu.functionAndClones("ggml_graph_compute_thread").isEmpty());
            assertTrue(cpu.function("ggml_graph_compute").isPresent());
            assertTrue(llama.buildId().isPresent());
            assertFalse(llama.isStripped());
        }
        long elapsedMs = (System.nanoTime() - started) / 1_000_000;
        assertTrue(elapsedMs < 3000, "opening three llama.cpp libraries took " + elapsedMs + " ms");
    }

    private Path withMachine(Path library, int machine, String name) throws Exception {
        Path copy = Files.copy(library, dir.resolve(name));
        try (var channel = java.nio.channels.FileChannel.open(copy, StandardOpenOption.WRITE)) {
            channel.write(java.nio.ByteBuffer.wrap(new byte[] {(byte) machine, (byte) (machine >>> 8)}), 18);
        }
        return copy;
    }
}
