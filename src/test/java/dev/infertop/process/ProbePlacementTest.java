package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProbePlacementTest {
    @TempDir
    Path dir;

    @Test
    void withEndbr64TheProbeSkipsToThePush() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        try (ElfFile elf = ElfFile.open(library)) {
            ProbeSite keepsSix = site(elf, "keeps_six");
            assertEquals(4, keepsSix.offsetFromEntry());
            assertEquals(CostClass.EMULATED, keepsSix.costClass());
            assertEquals("41 57", keepsSix.instructionHex());
            assertEquals("after endbr64, on push %r15: emulated", keepsSix.reason());

            ProbeSite usesScaled = site(elf, "uses_scaled");
            assertEquals(4, usesScaled.offsetFromEntry());
            assertEquals("55", usesScaled.instructionHex());
            assertEquals("after endbr64, on push %rbp: emulated", usesScaled.reason());

            ProbeSite leaf = site(elf, "leaf_multiply");
            assertEquals(0, leaf.offsetFromEntry());
            assertEquals(CostClass.SINGLE_STEPPED, leaf.costClass());
            assertEquals("f3 0f 1e fa", leaf.instructionHex());
            assertEquals("on endbr64 at entry: single-stepped (next is 48 0f af fe …, not a push)", leaf.reason());

            // endbr64 then jmp: the jmp would be emulated, but only a push is known to be a prologue
            assertEquals(CostClass.SINGLE_STEPPED, site(elf, "tail_jump").costClass());
            assertEquals(0, site(elf, "tail_jump").offsetFromEntry());

            // a local clone that is never called indirectly gets no endbr64
            ProbeSite clone = site(elf, "scaled.constprop.0");
            assertEquals(0, clone.offsetFromEntry());
            assertEquals(CostClass.SINGLE_STEPPED, clone.costClass());
        }
    }

    @Test
    void withoutEndbr64ThePushAtEntryIsProbed() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, false);
        try (ElfFile elf = ElfFile.open(library)) {
            ProbeSite keepsSix = site(elf, "keeps_six");
            assertEquals(0, keepsSix.offsetFromEntry());
            assertEquals(CostClass.EMULATED, keepsSix.costClass());
            assertEquals("on push %r15 at entry: emulated", keepsSix.reason());
            assertEquals("on push %rbp at entry: emulated", site(elf, "uses_scaled").reason());
            assertEquals("on jmp at entry: emulated branch", site(elf, "tail_jump").reason());
            assertEquals("e9", site(elf, "tail_jump").instructionHex().substring(0, 2));
            assertEquals(CostClass.SINGLE_STEPPED, site(elf, "leaf_multiply").costClass());
        }
    }

    @Test
    void everyDecisionMatchesObjdumpByteForByte() throws Exception {
        for (boolean cfProtection : List.of(true, false)) {
            Path library = TestTools.compileTinyLibrary(dir, cfProtection);
            try (ElfFile elf = ElfFile.open(library)) {
                for (String name : List.of("keeps_six", "uses_scaled", "leaf_multiply", "tail_jump", "scaled.constprop.0")) {
                    assertAgreesWithObjdump(library, ProbePlacement.place(elf, elf.function(name).orElseThrow()));
                }
            }
        }
    }

    @Test
    void fileOffsetIsWhereTheInstructionBytesLieInTheFile() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        byte[] file = java.nio.file.Files.readAllBytes(library);
        try (ElfFile elf = ElfFile.open(library)) {
            ProbeSite site = site(elf, "keeps_six");
            assertArrayEquals(site.instructionBytes(), Arrays.copyOfRange(file, (int) site.fileOffset(),
                    (int) site.fileOffset() + site.instructionBytes().length));
        }
    }

    @Test
    void decidesOnBareX86Bytes() {
        assertDecision("41 57 41 56", 0, CostClass.EMULATED, "on push %r15 at entry: emulated");
        assertDecision("55 48 89 e5", 0, CostClass.EMULATED, "on push %rbp at entry: emulated");
        assertDecision("53", 0, CostClass.EMULATED, "on push %rbx at entry: emulated");
        assertDecision("f3 0f 1e fa 41 54", 4, CostClass.EMULATED, "after endbr64, on push %r12: emulated");
        assertDecision("f3 0f 1e fa 50", 4, CostClass.EMULATED, "after endbr64, on push %rax: emulated");
        assertDecision("f3 0f 1e fa 48 89 e5", 0, CostClass.SINGLE_STEPPED,
                "on endbr64 at entry: single-stepped (next is 48 89 e5 …, not a push)");
        assertDecision("f3 0f 1e fa", 0, CostClass.SINGLE_STEPPED,
                "on endbr64 at entry: single-stepped (next is nothing, not a push)");
        // 0x41 0x58 is pop %r8, 0x48 0x50 would be REX.W push (not what the kernel emulates)
        assertDecision("41 58", 0, CostClass.SINGLE_STEPPED, "at entry, on 41 58 … (neither push nor endbr64+push): single-stepped");
        assertDecision("48 50", 0, CostClass.SINGLE_STEPPED, "at entry, on 48 50 … (neither push nor endbr64+push): single-stepped");
        assertDecision("e8 00 00 00 00", 0, CostClass.EMULATED, "on call at entry: emulated branch");
        assertDecision("eb fe", 0, CostClass.EMULATED, "on jmp at entry: emulated branch");
        assertDecision("", 0, CostClass.SINGLE_STEPPED, "at entry, on nothing (neither push nor endbr64+push): single-stepped");
    }

    @Test
    void neverProbesPastTheEndOfATinyFunction() {
        byte[] endbrThenPush = HexFormat.ofDelimiter(" ").parseHex("f3 0f 1e fa 41 57");
        assertEquals(0, ProbePlacement.decide(Machine.X86_64, endbrThenPush, 5).offsetFromEntry());
        assertEquals(4, ProbePlacement.decide(Machine.X86_64, endbrThenPush, 6).offsetFromEntry());
        assertEquals(4, ProbePlacement.decide(Machine.X86_64, endbrThenPush, 0).offsetFromEntry(), "size unknown");
    }

    @Test
    void aarch64IsProbedAtEntryAndItsInstructionNamed() {
        byte[] pacThenStp = HexFormat.ofDelimiter(" ").parseHex("3f 23 03 d5 fd 7b bf a9");
        ProbePlacement.Decision decision = ProbePlacement.decide(Machine.AARCH64, pacThenStp, 64);
        assertEquals(0, decision.offsetFromEntry());
        assertEquals(4, decision.instructionLengthBytes());
        assertEquals(CostClass.SINGLE_STEPPED, decision.costClass());
        assertEquals("at entry, on paciasp: stepped out of line by the arm64 uprobe code", decision.reason());
        byte[] stp = HexFormat.ofDelimiter(" ").parseHex("fd 7b bf a9");
        assertEquals("at entry, on stp x29, x30, [sp, #-16]!: stepped out of line by the arm64 uprobe code",
                ProbePlacement.decide(Machine.AARCH64, stp, 64).reason());
        byte[] sub = HexFormat.ofDelimiter(" ").parseHex("ff 83 0b d1"); // sub sp, sp, #0x2e0
        assertEquals("at entry, on sub sp, sp, #736: stepped out of line by the arm64 uprobe code",
                ProbePlacement.decide(Machine.AARCH64, sub, 64).reason());
        byte[] adrp = HexFormat.ofDelimiter(" ").parseHex("10 00 00 90"); // adrp x16, . (a PLT stub's first)
        ProbePlacement.Decision simulated = ProbePlacement.decide(Machine.AARCH64, adrp, 64);
        assertEquals(CostClass.EMULATED, simulated.costClass());
        assertEquals("at entry, on adrp: simulated by the arm64 uprobe code", simulated.reason());
        byte[] b = HexFormat.ofDelimiter(" ").parseHex("02 00 00 14"); // b .+8
        assertEquals(CostClass.EMULATED, ProbePlacement.decide(Machine.AARCH64, b, 64).costClass());
    }

    @Test
    void npmPrebuiltEntriesAreProbedAfterEndbr64() throws Exception {
        TestTools.requireNpmPrebuilt();
        Path llama = TestTools.NPM_PREBUILT.resolve("libllama.v0.5.0.so");
        Path base = TestTools.NPM_PREBUILT.resolve("libggml-base.so");
        Path cpu = TestTools.NPM_PREBUILT.resolve("libggml-cpu-haswell.so");
        ProbeSite decode = placeChecked(llama, "llama_decode");
        assertEquals(4, decode.offsetFromEntry());
        assertEquals("after endbr64, on push %r12: emulated", decode.reason());
        assertEquals(4, placeChecked(cpu, "ggml_graph_compute").offsetFromEntry());
        assertEquals(4, placeChecked(cpu, "ggml_compute_forward_mul_mat").offsetFromEntry());
        assertEquals(CostClass.EMULATED, placeChecked(cpu, "ggml_compute_forward_mul_mat").costClass());
        // starts with endbr64 then test/mov: nothing cheap to stand on
        assertEquals(CostClass.SINGLE_STEPPED, placeChecked(base, "ggml_backend_graph_compute_async").costClass());
        assertEquals(CostClass.SINGLE_STEPPED, placeChecked(cpu, "ggml_barrier").costClass());
        try (ElfFile elf = ElfFile.open(cpu)) {
            for (ElfSymbol thread : elf.functionAndClones("ggml_graph_compute_thread")) {
                ProbeSite site = ProbePlacement.place(elf, thread);
                assertAgreesWithObjdump(cpu, site);
                assertEquals(CostClass.EMULATED, site.costClass(), site.toString());
            }
        }
    }

    @Test
    void sourceBuildEntriesStartWithPushOrNot() throws Exception {
        TestTools.requireSourceBuild();
        Path bin = TestTools.SOURCE_BUILD_BIN;
        ProbeSite decode = placeChecked(bin.resolve("libllama.so"), "llama_decode");
        assertEquals(0, decode.offsetFromEntry());
        assertEquals(CostClass.EMULATED, decode.costClass());
        ProbeSite mulMat = placeChecked(bin.resolve("libggml-cpu.so"), "ggml_compute_forward_mul_mat");
        assertEquals("on push %r15 at entry: emulated", mulMat.reason());
        assertEquals(CostClass.SINGLE_STEPPED, placeChecked(bin.resolve("libggml-cpu.so"), "ggml_barrier").costClass());
        try (ElfFile cpu = ElfFile.open(bin.resolve("libggml-cpu.so"))) {
            // built with OpenMP: ggml_graph_compute._omp_fn.0 is the parallel region, not a clone of ggml_graph_compute
            assertEquals(List.of("ggml_graph_compute"),
                    cpu.functionAndClones("ggml_graph_compute").stream().map(ElfSymbol::name).toList());
            assertTrue(cpu.functionAndClones("ggml_graph_compute_thread").stream()
                    .anyMatch(s -> s.name().startsWith("ggml_graph_compute_thread.")));
        }
    }

    private static ProbeSite site(ElfFile elf, String name) throws TargetException {
        return ProbePlacement.place(elf, elf.function(name).orElseThrow(() -> new AssertionError("no " + name)));
    }

    private static ProbeSite placeChecked(Path library, String name) throws Exception {
        try (ElfFile elf = ElfFile.open(library)) {
            ProbeSite site = site(elf, name);
            assertAgreesWithObjdump(library, site);
            return site;
        }
    }

    /** objdump must show, at the probe address, an instruction whose bytes the site reports. */
    private static void assertAgreesWithObjdump(Path library, ProbeSite site) throws Exception {
        List<TestTools.Instruction> view = TestTools.disassemble(library, site.function().vaddr(), 16);
        TestTools.Instruction probed = view.stream().filter(i -> i.vaddr() == site.vaddr()).findFirst()
                .orElseThrow(() -> new AssertionError("objdump shows no instruction boundary at " + site));
        byte[] reported = site.instructionBytes();
        int common = Math.min(reported.length, probed.bytes().length);
        assertArrayEquals(Arrays.copyOf(probed.bytes(), common), Arrays.copyOf(reported, common), site.toString());
        if (site.costClass() == CostClass.EMULATED) {
            assertEquals(probed.bytes().length, reported.length, "decoded length of " + site);
            assertTrue(probed.text().startsWith("push") || probed.text().startsWith("jmp")
                    || probed.text().startsWith("call"), probed.text() + " for " + site);
        } else {
            assertTrue(!probed.text().startsWith("push"), "a push left single-stepped: " + site);
        }
        if (site.offsetFromEntry() == 4) {
            assertEquals("endbr64", view.getFirst().text(), site.toString());
        }
    }

    private static void assertDecision(String hex, int offset, CostClass cost, String reason) {
        byte[] bytes = hex.isEmpty() ? new byte[0] : HexFormat.ofDelimiter(" ").parseHex(hex);
        ProbePlacement.Decision decision = ProbePlacement.decide(Machine.X86_64, bytes, 0);
        assertEquals(offset, decision.offsetFromEntry(), hex);
        assertEquals(cost, decision.costClass(), hex);
        assertEquals(reason, decision.reason(), hex);
    }
}
