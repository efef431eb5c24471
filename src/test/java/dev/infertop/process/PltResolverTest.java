package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PltResolverTest {
    @TempDir
    Path dir;

    @Test
    void classicPltOfTinyLibraryMatchesObjdump() throws Exception {
        Path library = CallSiteScannerTest.compileCallsLibrary(dir, false);
        try (ElfFile elf = ElfFile.open(library)) {
            PltResolver plt = PltResolver.of(elf);
            assertEquals(TestTools.objdumpPltStubs(library), stubsByAddress(plt));
            PltResolver.PltStub barrier = plt.stubsFor("barrier_like").getFirst();
            assertEquals(".plt", barrier.sectionName());
            assertEquals(PltResolver.StubKind.X86_JMP, barrier.kind());
            // __cxa_finalize's stub sits in .plt.got and jumps through a GLOB_DAT slot
            assertEquals(".plt.got", plt.stubsFor("__cxa_finalize").getFirst().sectionName());
            assertTrue(plt.stubsFor("fused_local").isEmpty(), "a static function has no stub");
            assertTrue(plt.stubsFor("hidden_helper").isEmpty(), "a hidden function has no stub");
        }
    }

    @Test
    void ibtPltOfTinyLibraryMatchesObjdump() throws Exception {
        Path library = CallSiteScannerTest.compileCallsLibrary(dir, true);
        try (ElfFile elf = ElfFile.open(library)) {
            PltResolver plt = PltResolver.of(elf);
            assertEquals(TestTools.objdumpPltStubs(library), stubsByAddress(plt));
            PltResolver.PltStub barrier = plt.stubsFor("barrier_like").getFirst();
            assertEquals(".plt.sec", barrier.sectionName());
            assertEquals(PltResolver.StubKind.X86_ENDBR64_JMP, barrier.kind());
            assertEquals(barrier, plt.stubAt(barrier.vaddr()).orElseThrow());
            assertTrue(plt.stubs().stream().noneMatch(s -> s.sectionName().equals(".plt")),
                    "with IBT the lazy .plt entries push and jump to PLT0: not callable stubs");
        }
    }

    @Test
    void llamaCppPltsMatchObjdump() throws Exception {
        TestTools.requireSourceBuild();
        List<Path> libraries = CallSiteScannerTest.llamaCpuLibraries();
        Map<String, String> kinds = new TreeMap<>();
        for (Path library : libraries) {
            try (ElfFile elf = ElfFile.open(library)) {
                PltResolver plt = PltResolver.of(elf);
                Map<Long, String> objdump = TestTools.objdumpPltStubs(library);
                assertTrue(objdump.size() > 300, library + ": objdump named " + objdump.size() + " stubs");
                assertSameStubs(objdump, stubsByAddress(plt), library.toString());
                assertEquals(1, plt.stubsFor("ggml_barrier").size(), library.toString());
                kinds.put(library.getFileName().toString(), new TreeSet<>(plt.stubs().stream()
                        .map(s -> s.sectionName() + ":" + s.kind()).toList()).toString());
            }
        }
        assertEquals("[.plt.got:X86_JMP, .plt:X86_JMP]", kinds.get("libggml-cpu.so"), kinds.toString());
        kinds.forEach((name, seen) -> assertTrue(name.equals("libggml-cpu.so")
                || seen.equals("[.plt.got:X86_ENDBR64_BND_JMP, .plt.sec:X86_ENDBR64_BND_JMP]"), name + " " + seen));
    }

    @Test
    void aarch64PltStubsAreNamedByTheirJumpSlots() throws Exception {
        for (boolean bti : List.of(false, true)) {
            Aarch64Library library = Aarch64Library.write(dir.resolve(bti ? "bti.so" : "plain.so"), bti);
            try (ElfFile elf = ElfFile.open(library.path())) {
                assertEquals(Machine.AARCH64, elf.machine());
                PltResolver plt = PltResolver.of(elf);
                assertEquals(library.stubs(), stubsByAddress(plt), "bti " + bti);
                PltResolver.StubKind kind = bti ? PltResolver.StubKind.AARCH64_BTI_ADRP_LDR_BR
                        : PltResolver.StubKind.AARCH64_ADRP_LDR_BR;
                assertTrue(plt.stubs().stream().allMatch(s -> s.kind() == kind), plt.stubs().toString());
                assertEquals(library.barrierSlot(), plt.stubsFor("ggml_barrier").getFirst().gotSlotVaddr());
            }
        }
    }

    @Test
    void x86BndStubsWithoutEndbr64() throws Exception {
        X86Library library = X86Library.write(dir.resolve("bnd.so"), new byte[] {(byte) 0xc3});
        try (ElfFile elf = ElfFile.open(library.path())) {
            PltResolver plt = PltResolver.of(elf);
            assertEquals(library.stubs(), stubsByAddress(plt));
            assertTrue(plt.stubs().stream().allMatch(s -> s.kind() == PltResolver.StubKind.X86_BND_JMP));
            assertEquals(".plt.bnd", plt.stubs().getFirst().sectionName());
        }
    }

    /** Equal maps, or a failure listing only the differences (a llama.cpp PLT has 500+ stubs). */
    static void assertSameStubs(Map<Long, String> expected, Map<Long, String> actual, String context) {
        Map<Long, String> missing = new TreeMap<>(expected);
        missing.entrySet().removeAll(actual.entrySet());
        Map<Long, String> extra = new TreeMap<>(actual);
        extra.entrySet().removeAll(expected.entrySet());
        assertTrue(missing.isEmpty() && extra.isEmpty(), context + ": " + missing.size() + " stubs missing, e.g. "
                + missing.entrySet().stream().limit(5).toList() + "; " + extra.size() + " unexpected, e.g. "
                + extra.entrySet().stream().limit(5).toList());
    }

    static Map<Long, String> stubsByAddress(PltResolver plt) {
        Map<Long, String> result = new TreeMap<>();
        plt.stubs().forEach(s -> result.put(s.vaddr(), s.symbolName()));
        return result;
    }

    /**
     * A hand-assembled aarch64 library: PLT0, then stubs for ggml_barrier and other_fn (with {@code bti c} first
     * when {@code bti}); in .text, fused_local, node_loop (bl ggml_barrier@plt, bl fused_local, bl other_fn@plt,
     * bl helper_after, bl ggml_barrier@plt) and helper_after (bl ggml_barrier@plt).
     */
    record Aarch64Library(Path path, Map<Long, String> stubs, long barrierSlot, long nodeLoop, long fusedLocal,
                          long helperAfter) {
        static final String[] IMPORTS = {"ggml_barrier", "other_fn"};

        static Aarch64Library write(Path file, boolean bti) throws Exception {
            long got = SyntheticElf.GOT;
            List<Integer> plt = new ArrayList<>();
            long plt0Slot = got + 16;  // PLT0 jumps to _dl_runtime_resolve through GOT[2]: no relocation names it
            long pc = SyntheticElf.PLT;
            plt.addAll(List.of(SyntheticElf.A64.STP_X16_LR, SyntheticElf.A64.adrpX16(pc + 4, plt0Slot),
                    SyntheticElf.A64.ldrX17X16(plt0Slot), SyntheticElf.A64.addX16X16(plt0Slot),
                    SyntheticElf.A64.BR_X17, SyntheticElf.A64.NOP, SyntheticElf.A64.NOP, SyntheticElf.A64.NOP));
            Map<Long, String> stubs = new TreeMap<>();
            List<SyntheticElf.Import> imports = new ArrayList<>();
            for (int i = 0; i < IMPORTS.length; i++) {
                long slot = got + 24 + 8L * i;
                long stub = SyntheticElf.PLT + 4L * plt.size();
                if (bti) {
                    plt.add(SyntheticElf.A64.BTI_C);
                }
                long adrp = SyntheticElf.PLT + 4L * plt.size();
                plt.addAll(List.of(SyntheticElf.A64.adrpX16(adrp, slot), SyntheticElf.A64.ldrX17X16(slot),
                        SyntheticElf.A64.addX16X16(slot), SyntheticElf.A64.BR_X17));
                if (bti) {
                    plt.add(SyntheticElf.A64.NOP);
                }
                stubs.put(stub, IMPORTS[i]);
                imports.add(new SyntheticElf.Import(IMPORTS[i], slot, ElfRelocation.R_AARCH64_JUMP_SLOT));
            }
            long barrierStub = stubs.keySet().stream().toList().get(0);
            long otherStub = stubs.keySet().stream().toList().get(1);

            long fusedLocal = SyntheticElf.TEXT;
            long nodeLoop = fusedLocal + 16;
            long helperAfter = nodeLoop + 4 * 10;
            List<Integer> text = new ArrayList<>(List.of(
                    SyntheticElf.A64.NOP, SyntheticElf.A64.NOP, SyntheticElf.A64.NOP, SyntheticElf.A64.RET));
            long at = nodeLoop;
            text.add(SyntheticElf.A64.STP_FP_LR);
            text.add(SyntheticElf.A64.MOV_FP_SP);
            text.add(SyntheticElf.A64.bl(at + 8, barrierStub));
            text.add(SyntheticElf.A64.bl(at + 12, fusedLocal));
            text.add(SyntheticElf.A64.bl(at + 16, otherStub));
            text.add(SyntheticElf.A64.bl(at + 20, helperAfter));
            text.add(SyntheticElf.A64.bl(at + 24, barrierStub));
            text.add(0x14000000 | (int) ((barrierStub - (at + 28)) / 4) & 0x3ffffff);  // b: a tail jump, not a call
            text.add(SyntheticElf.A64.LDP_FP_LR);
            text.add(SyntheticElf.A64.RET);
            text.add(SyntheticElf.A64.bl(helperAfter, barrierStub));
            text.add(SyntheticElf.A64.RET);
            Path path = SyntheticElf.write(file, Machine.AARCH64, ".plt", 16, SyntheticElf.A64.bytes(plt),
                    SyntheticElf.A64.bytes(text), imports, List.of(
                            new SyntheticElf.Function("fused_local", fusedLocal, 16, false),
                            new SyntheticElf.Function("node_loop", nodeLoop, 40, true),
                            new SyntheticElf.Function("helper_after", helperAfter, 8, true)));
            return new Aarch64Library(path, stubs, got + 24, nodeLoop, fusedLocal, helperAfter);
        }
    }

    /**
     * A hand-assembled x86_64 library with MPX-style {@code bnd jmp} stubs in .plt.bnd (8 bytes each) for
     * ggml_barrier and other_fn, and {@code node_loop} in .text made of {@code code} (a {@code ret} when empty).
     */
    record X86Library(Path path, Map<Long, String> stubs, long nodeLoop) {
        static final long NODE_LOOP = SyntheticElf.TEXT + 0x10;

        static long stub(int index) {
            return SyntheticElf.PLT + 8L * index;
        }

        static X86Library write(Path file, byte[] code) throws Exception {
            String[] imports = {"ggml_barrier", "other_fn"};
            byte[] plt = new byte[8 * imports.length];
            Map<Long, String> stubs = new TreeMap<>();
            List<SyntheticElf.Import> relocations = new ArrayList<>();
            for (int i = 0; i < imports.length; i++) {
                long slot = SyntheticElf.GOT + 24 + 8L * i;
                long stub = stub(i);
                int rel = (int) (slot - (stub + 7));
                byte[] entry = {(byte) 0xf2, (byte) 0xff, 0x25, (byte) rel, (byte) (rel >> 8), (byte) (rel >> 16),
                        (byte) (rel >> 24), (byte) 0x90};
                System.arraycopy(entry, 0, plt, 8 * i, 8);
                stubs.put(stub, imports[i]);
                relocations.add(new SyntheticElf.Import(imports[i], slot, ElfRelocation.R_X86_64_JUMP_SLOT));
            }
            byte[] text = new byte[0x10 + code.length];
            System.arraycopy(code, 0, text, 0x10, code.length);
            Path path = SyntheticElf.write(file, Machine.X86_64, ".plt.bnd", 8, plt, text, relocations,
                    List.of(new SyntheticElf.Function("node_loop", NODE_LOOP, code.length, true)));
            return new X86Library(path, stubs, NODE_LOOP);
        }
    }
}
