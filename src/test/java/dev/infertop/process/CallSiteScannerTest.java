package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CallSiteScannerTest {
    @TempDir
    Path dir;

    /** A node loop calling an exported function (through the PLT), a static and a hidden one (directly). */
    static final String CALLS_SOURCE = """
            extern long sink(long);
            /* exported, default visibility: interposable, so calls from this library go through its PLT stub */
            __attribute__((noinline)) long barrier_like(long x) { return sink(x) + 1; }
            /* static: called directly at its own address */
            static __attribute__((noinline, noclone)) long fused_local(long x) { return sink(x * 7) + 2; }
            /* hidden: exported from the object, not from the library, so called directly */
            __attribute__((visibility("hidden"), noinline)) long hidden_helper(long x) { return sink(x - 3) * 5; }
            volatile long decoy;
            long node_loop(long n) {
                long acc = 0;
                for (long i = 0; i < n; i++) {
                    acc += barrier_like(i);
                    acc += fused_local(acc);
                    decoy = 0x00e8e8e8e8e8e8e8L; /* a movabs whose immediate is e8 bytes: not calls */
                    acc += barrier_like(acc);
                    acc += hidden_helper(i);
                }
                return acc + sink(acc);
            }
            long other_caller(long x) { return barrier_like(x) + fused_local(x); }
            """;

    /** -O2 -fPIC; with {@code ibt}, -fcf-protection=full and -z ibtplt (endbr64 stubs in .plt.sec). */
    static Path compileCallsLibrary(Path dir, boolean ibt) throws Exception {
        Path source = dir.resolve("calls.c");
        Files.writeString(source, CALLS_SOURCE);
        Path library = dir.resolve(ibt ? "libcalls-ibt.so" : "libcalls.so");
        List<String> command = new ArrayList<>(List.of("gcc", "-O2", "-shared", "-fPIC",
                "-fcf-protection=" + (ibt ? "full" : "none"), "-o", library.toString(), source.toString()));
        if (ibt) {
            command.add("-Wl,-z,ibtplt");
        }
        TestTools.run(command.toArray(String[]::new));
        return library;
    }

    /** The source-built libggml-cpu and every provisioned prebuilt variant; skips (fails on CI) when absent. */
    static List<Path> llamaCpuLibraries() throws Exception {
        TestTools.requireSourceBuild();
        List<Path> prebuilt = List.of();
        if (Files.isDirectory(TestTools.PROVISIONED_PREBUILT)) {
            try (Stream<Path> files = Files.list(TestTools.PROVISIONED_PREBUILT)) {
                prebuilt = files.filter(p -> p.getFileName().toString().matches("libggml-cpu-.*\\.so")).sorted().toList();
            }
        }
        TestTools.requireOrSkip(!prebuilt.isEmpty(), "prebuilt llama.cpp CPU backends absent: run "
                + "src/scripts/provision-llama.sh (" + TestTools.PROVISIONED_PREBUILT + "/libggml-cpu-*.so)");
        List<Path> libraries = new ArrayList<>();
        libraries.add(TestTools.SOURCE_BUILD_BIN.resolve("libggml-cpu.so"));
        libraries.addAll(prebuilt);
        return libraries;
    }

    @Test
    void tinyLibraryCallSitesEqualObjdumpWithAndWithoutIbt() throws Exception {
        for (boolean ibt : List.of(false, true)) {
            Path library = compileCallsLibrary(dir, ibt);
            try (ElfFile elf = ElfFile.open(library)) {
                for (String callerName : List.of("node_loop", "other_caller")) {
                    ElfSymbol caller = elf.function(callerName).orElseThrow();
                    List<TestTools.ObjdumpCall> objdump = TestTools.objdumpCalls(library, caller);
                    // every direct call, and nothing in the movabs of e8 bytes
                    assertEquals(objdump.stream().map(c -> List.of(c.vaddr(), c.target())).toList(),
                            CallSiteScanner.directCalls(elf, caller).stream()
                                    .map(c -> List.of(c.vaddr(), c.targetVaddr())).toList(), callerName);
                    for (String callee : List.of("barrier_like", "fused_local", "hidden_helper", "sink")) {
                        assertSitesEqualObjdump(elf, caller, objdump, callee::equals,
                                CallSiteScanner.findCalls(elf, caller, callee));
                    }
                }
                ElfSymbol nodeLoop = elf.function("node_loop").orElseThrow();
                List<CallSite> barriers = CallSiteScanner.findCalls(elf, nodeLoop, "barrier_like");
                assertEquals(2, barriers.size(), barriers.toString());
                assertTrue(barriers.stream().allMatch(CallSite::viaPlt));
                assertEquals(PltResolver.of(elf).stubsFor("barrier_like").getFirst().vaddr(),
                        barriers.getFirst().targetVaddr());
                assertEquals("call rel32 to barrier_like@plt: emulated by the x86 uprobe code, not single-stepped",
                        barriers.getFirst().reason());
                List<CallSite> local = CallSiteScanner.findCalls(elf, nodeLoop, "fused_local");
                assertEquals(1, local.size());
                assertFalse(local.getFirst().viaPlt());
                assertEquals(elf.function("fused_local").orElseThrow().vaddr(), local.getFirst().targetVaddr());
                assertEquals("call rel32 to fused_local: emulated by the x86 uprobe code, not single-stepped",
                        local.getFirst().reason());

                List<CallSite> matching = CallSiteScanner.findCallsMatching(elf, nodeLoop,
                        n -> n.endsWith("_local") || n.startsWith("hidden_"));
                assertEquals(List.of("fused_local", "hidden_helper"),
                        matching.stream().map(CallSite::calleeName).toList());
                assertTrue(CallSiteScanner.findCalls(elf, nodeLoop, "leaf_that_does_not_exist").isEmpty());
            }
        }
    }

    @Test
    void x86ScanSkipsAnE8InsideAnImmediateThatWouldReachThePlt() throws Exception {
        long nodeLoop = PltResolverTest.X86Library.NODE_LOOP;
        long barrierStub = PltResolverTest.X86Library.stub(0);
        long otherStub = PltResolverTest.X86Library.stub(1);
        byte[] code = new byte[21];
        // movabs $imm64, %rax whose immediate starts e8 <rel32 to ggml_barrier@plt from there>
        code[0] = 0x48;
        code[1] = (byte) 0xb8;
        putCall(code, 2, nodeLoop, barrierStub);
        putCall(code, 10, nodeLoop, barrierStub);
        putCall(code, 15, nodeLoop, otherStub);
        code[20] = (byte) 0xc3;
        PltResolverTest.X86Library library = PltResolverTest.X86Library.write(dir.resolve("decoy.so"), code);
        try (ElfFile elf = ElfFile.open(library.path())) {
            ElfSymbol caller = elf.function("node_loop").orElseThrow();
            // the decoy is real: a byte-pattern scan would report a call to the stub at +2
            assertEquals(barrierStub, nodeLoop + 7 + PltResolver.word(code, 3));

            List<CallSite> sites = CallSiteScanner.findCalls(elf, caller, "ggml_barrier");
            assertEquals(1, sites.size(), sites.toString());
            CallSite site = sites.getFirst();
            assertEquals(nodeLoop + 10, site.vaddr());
            assertEquals(10, site.offsetInCaller());
            assertEquals(nodeLoop + 10, site.fileOffset(), "the synthetic file is mapped at address 0");
            assertEquals(5, site.instructionLengthBytes());
            assertEquals(nodeLoop + 15, site.returnVaddr());
            assertEquals(barrierStub, site.targetVaddr());
            assertTrue(site.viaPlt());
            assertEquals(CostClass.EMULATED, site.costClass());
            assertEquals(List.of(nodeLoop + 10, nodeLoop + 15),
                    CallSiteScanner.directCalls(elf, caller).stream().map(CallSiteScanner.DirectCall::vaddr).toList());
            assertEquals(List.of("ggml_barrier", "other_fn"), CallSiteScanner.findCallsMatching(elf, caller, n -> true)
                    .stream().map(CallSite::calleeName).toList());
        }
    }

    @Test
    void undecodableBytesFailTheFunctionInsteadOfGuessing() throws Exception {
        PltResolverTest.X86Library invalid = PltResolverTest.X86Library.write(dir.resolve("invalid.so"),
                HexFormat.of().parseHex("9006c3"));
        try (ElfFile elf = ElfFile.open(invalid.path())) {
            ElfSymbol caller = elf.function("node_loop").orElseThrow();
            TargetException e = assertThrows(TargetException.class,
                    () -> CallSiteScanner.findCalls(elf, caller, "ggml_barrier"));
            assertEquals("in node_loop of " + invalid.path() + ": cannot decode the x86-64 instruction at offset 1 "
                    + "(06 c3): opcode invalid in 64-bit mode", e.getMessage());
        }
        // the last instruction runs past the symbol's end
        PltResolverTest.X86Library cut = PltResolverTest.X86Library.write(dir.resolve("cut.so"),
                HexFormat.of().parseHex("90e8000000"));
        try (ElfFile elf = ElfFile.open(cut.path())) {
            ElfSymbol caller = elf.function("node_loop").orElseThrow();
            assertTrue(assertThrows(TargetException.class, () -> CallSiteScanner.findCalls(elf, caller, "x"))
                    .getMessage().endsWith(": cut off"));
        }
        // a 16-bit call: the kernel refuses to probe it
        PltResolverTest.X86Library callw = PltResolverTest.X86Library.write(dir.resolve("callw.so"),
                HexFormat.of().parseHex("66e800000000c3"));
        try (ElfFile elf = ElfFile.open(callw.path())) {
            ElfSymbol caller = elf.function("node_loop").orElseThrow();
            assertTrue(assertThrows(TargetException.class, () -> CallSiteScanner.findCalls(elf, caller, "x"))
                    .getMessage().endsWith("call with a 66 prefix, which the kernel's uprobe code refuses"));
        }
    }

    @Test
    void aarch64BlSitesThroughPltAndDirect() throws Exception {
        for (boolean bti : List.of(false, true)) {
            PltResolverTest.Aarch64Library library =
                    PltResolverTest.Aarch64Library.write(dir.resolve(bti ? "bti.so" : "plain.so"), bti);
            try (ElfFile elf = ElfFile.open(library.path())) {
                ElfSymbol nodeLoop = elf.function("node_loop").orElseThrow();
                long at = library.nodeLoop();
                List<CallSite> barriers = CallSiteScanner.findCalls(elf, nodeLoop, "ggml_barrier");
                assertEquals(List.of(at + 8, at + 24), barriers.stream().map(CallSite::vaddr).toList(), "bti " + bti);
                CallSite first = barriers.getFirst();
                assertEquals(4, first.instructionLengthBytes());
                assertEquals(at + 12, first.returnVaddr());
                assertEquals(at + 8, first.fileOffset());
                assertTrue(first.viaPlt());
                assertEquals(CostClass.EMULATED, first.costClass());
                assertEquals("bl to ggml_barrier@plt: simulated by the arm64 uprobe code, not single-stepped",
                        first.reason());

                CallSite backward = CallSiteScanner.findCalls(elf, nodeLoop, "fused_local").getFirst();
                assertEquals(List.of(at + 12, library.fusedLocal(), false),
                        List.of(backward.vaddr(), backward.targetVaddr(), backward.viaPlt()));
                CallSite forward = CallSiteScanner.findCalls(elf, nodeLoop, "helper_after").getFirst();
                assertEquals(List.of(at + 20, library.helperAfter()), List.of(forward.vaddr(), forward.targetVaddr()));
                // the b (tail jump) at +28 is not a call; helper_after's own bl is outside node_loop
                assertEquals(List.of("ggml_barrier", "fused_local", "other_fn", "helper_after", "ggml_barrier"),
                        CallSiteScanner.findCallsMatching(elf, nodeLoop, n -> true).stream()
                                .map(CallSite::calleeName).toList());
                assertEquals(List.of(library.helperAfter()), CallSiteScanner.findCalls(elf,
                        elf.function("helper_after").orElseThrow(), "ggml_barrier").stream().map(CallSite::vaddr).toList());
            }
        }
    }

    /**
     * An independent check of the hand-assembled aarch64 libraries: llvm-objdump (a setup.sh dependency) decodes
     * the same bl targets and synthesises the same {@code <symbol@plt>} stubs from .rela.plt.
     */
    @Test
    void aarch64SitesAndStubsEqualLlvmObjdump() throws Exception {
        TestTools.requireOrSkip(Files.isExecutable(Path.of("/usr/bin/llvm-objdump")),
                "llvm-objdump absent: install llvm (src/scripts/setup.sh)");
        Pattern header = Pattern.compile("^([0-9a-f]+) <([^>]+)>:$");
        Pattern bl = Pattern.compile("^\\s*([0-9a-f]+):\\s+(?:[0-9a-f]{2} ){4}\\s*bl\\s+0x([0-9a-f]+) <([^>+]+)>$");
        for (boolean bti : List.of(false, true)) {
            PltResolverTest.Aarch64Library library =
                    PltResolverTest.Aarch64Library.write(dir.resolve(bti ? "bti.so" : "plain.so"), bti);
            Map<Long, String> llvmStubs = new TreeMap<>();
            List<List<Object>> llvmCalls = new ArrayList<>();
            for (String line : TestTools.run("llvm-objdump", "-d", "--triple=aarch64", library.path().toString())
                    .split("\n")) {
                Matcher h = header.matcher(line);
                if (h.matches() && h.group(2).endsWith("@plt")) {
                    llvmStubs.put(Long.parseLong(h.group(1), 16), h.group(2).replaceFirst("@plt$", ""));
                }
                Matcher m = bl.matcher(line);
                if (m.matches()) {
                    llvmCalls.add(List.of(Long.parseLong(m.group(1), 16), Long.parseLong(m.group(2), 16), m.group(3)));
                }
            }
            try (ElfFile elf = ElfFile.open(library.path())) {
                assertEquals(llvmStubs, PltResolverTest.stubsByAddress(PltResolver.of(elf)), "bti " + bti);
                List<List<Object>> mine = new ArrayList<>();
                for (ElfSymbol function : elf.functions()) {
                    for (CallSite site : CallSiteScanner.findCallsMatching(elf, function, n -> true)) {
                        mine.add(List.of(site.vaddr(), site.targetVaddr(),
                                site.calleeName() + (site.viaPlt() ? "@plt" : "")));
                    }
                }
                mine.sort(java.util.Comparator.comparing(c -> (Long) c.getFirst()));
                assertEquals(6, llvmCalls.size(), llvmCalls.toString());
                assertEquals(llvmCalls, mine, "bti " + bti);
            }
        }
    }

    @Test
    void llamaCppGraphComputeThreadBarrierAndFusedCallSitesEqualObjdump() throws Exception {
        List<String> findings = new ArrayList<>();
        for (Path library : llamaCpuLibraries()) {
            try (ElfFile elf = ElfFile.open(library)) {
                List<ElfSymbol> loops = elf.functionAndClones("ggml_graph_compute_thread");
                assertFalse(loops.isEmpty(), library + " has no ggml_graph_compute_thread");
                for (ElfSymbol loop : loops) {
                    List<TestTools.ObjdumpCall> objdump = TestTools.objdumpCalls(library, loop);
                    List<CallSite> barriers = CallSiteScanner.findCalls(elf, loop, "ggml_barrier");
                    assertSitesEqualObjdump(elf, loop, objdump, "ggml_barrier"::equals, barriers);
                    assertTrue(barriers.size() >= 2, library + " " + loop.name() + ": " + barriers);
                    String fusedName = "ggml_compute_forward_rms_norm_mul_fused";
                    List<CallSite> rmsNorm = List.of();
                    if (elf.function(fusedName).isPresent()) {
                        rmsNorm = CallSiteScanner.findCalls(elf, loop, fusedName);
                        assertSitesEqualObjdump(elf, loop, objdump, fusedName::equals, rmsNorm);
                    }
                    Predicate<String> fused = n -> n.contains("_fused");
                    List<CallSite> allFused = CallSiteScanner.findCallsMatching(elf, loop, fused);
                    assertSitesEqualObjdump(elf, loop, objdump, fused, allFused);
                    findings.add(library.getFileName() + " " + loop.name() + ": ggml_barrier at "
                            + offsets(barriers) + ", " + fusedName + " at " + offsets(rmsNorm) + ", *_fused "
                            + allFused.stream().map(CallSite::calleeName).distinct().toList());
                }
            }
        }
        findings.forEach(System.out::println);
    }

    @Test
    void llamaCppDecoderBoundariesEqualObjdumpForEveryFunction() throws Exception {
        for (Path library : llamaCpuLibraries()) {
            List<String> checked = X86DecoderTest.assertBoundariesEqualObjdump(library, 500);
            assertTrue(checked.contains("ggml_graph_compute_thread.isra.0"), library.toString());
            assertTrue(checked.contains("ggml_compute_forward_mul_mat"), library.toString());
            assertTrue(checked.stream().filter(n -> n.startsWith("ggml_vec_dot_")).count() >= 5, library.toString());
        }
    }

    /**
     * {@code sites} must be exactly objdump's direct calls in {@code caller} whose label (stub or function name)
     * satisfies {@code callee}, each a 5-byte e8 at its address, emulated.
     */
    static void assertSitesEqualObjdump(ElfFile elf, ElfSymbol caller, List<TestTools.ObjdumpCall> objdump,
                                        Predicate<String> callee, List<CallSite> sites) throws Exception {
        List<TestTools.ObjdumpCall> expected = objdump.stream()
                .filter(c -> !c.label().contains("+") && callee.test(c.label().replaceFirst("@plt$", ""))).toList();
        String context = elf.path() + " " + caller.name() + ": scanner " + sites + " objdump " + expected;
        assertEquals(expected.stream().map(TestTools.ObjdumpCall::vaddr).toList(),
                sites.stream().map(CallSite::vaddr).toList(), context);
        for (int i = 0; i < sites.size(); i++) {
            CallSite site = sites.get(i);
            TestTools.ObjdumpCall call = expected.get(i);
            assertEquals(call.label(), site.calleeName() + (site.viaPlt() ? "@plt" : ""), context);
            assertEquals(call.target(), site.targetVaddr(), context);
            assertEquals(5, call.length(), context);
            assertEquals(5, site.instructionLengthBytes(), context);
            assertEquals(site.vaddr() + 5, site.returnVaddr(), context);
            assertEquals(elf.fileOffsetOf(site.vaddr()), site.fileOffset(), context);
            assertEquals((byte) 0xe8, elf.readBytesAtVaddr(site.vaddr(), 1)[0], context);
            assertEquals(CostClass.EMULATED, site.costClass(), context);
            assertEquals(caller, site.caller(), context);
        }
    }

    private static String offsets(List<CallSite> sites) {
        return sites.stream().map(s -> "+0x" + Long.toHexString(s.offsetInCaller()) + "(0x" + Long.toHexString(s.vaddr()) + ")")
                .toList().toString();
    }

    private static void putCall(byte[] code, int at, long codeVaddr, long target) {
        int rel = (int) (target - (codeVaddr + at + 5));
        code[at] = (byte) 0xe8;
        code[at + 1] = (byte) rel;
        code[at + 2] = (byte) (rel >> 8);
        code[at + 3] = (byte) (rel >> 16);
        code[at + 4] = (byte) (rel >> 24);
    }
}
