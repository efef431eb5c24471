package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node loop found again in a library stripped with binutils' strip: the oracle is the unstripped original's
 * .symtab, which says where ggml_graph_compute_thread (or its one .isra/.constprop clone) is and how long.
 */
class StrippedFunctionsTest {
    private static final String NODE_LOOP = StrippedFunctions.NODE_LOOP;
    /**
     * Where src/scripts/provision-distro-llama.sh puts Debian sid's llama.cpp: a root of the host's architecture
     * and libggml0 of the other one under foreign-arch/ (arm64 on x86_64, amd64 on aarch64); $INFERTOP_CACHE first,
     * as the script reads it.
     */
    private static final List<Path> DEBIAN_DIRS = Stream.of(
                    Optional.ofNullable(System.getenv("INFERTOP_CACHE")).filter(c -> !c.isBlank())
                            .map(c -> Path.of(c, "llama.cpp-debian-sid")).stream(),
                    Stream.of(Path.of(System.getProperty("user.home"), ".cache/infertop/llama.cpp-debian-sid"),
                            Path.of("/root/.cache/infertop/llama.cpp-debian-sid"),
                            Path.of("/tmp/cachetest/llama.cpp-debian-sid")))
            .flatMap(s -> s).distinct().toList();

    /**
     * ggml's shape in miniature: the exported ggml_graph_compute calls a static decoy and the static node loop
     * directly; the loop calls BARRIER after each node and once after the loop, the decoy DECOY_BARRIERS times.
     */
    static final String GGML_LIKE = """
            extern long sink(long);
            #ifdef GOMP
            extern void GOMP_barrier(void);
            #define BARRIER(s) GOMP_barrier()
            #else
            __attribute__((noinline)) void ggml_barrier(long *state) { sink(state[2]); }
            #define BARRIER(s) ggml_barrier(s)
            #endif
            static __attribute__((noinline, noclone)) long ggml_graph_compute_thread(long *state) {
                long acc = 0;
                for (long node = 0; node < state[0]; node++) {
                    acc += sink(node);
                    BARRIER(state);
                }
                BARRIER(state);
                return acc;
            }
            static __attribute__((noinline, noclone)) long prepare(long *state) {
                for (int i = 0; i < DECOY_BARRIERS; i++) {
                    BARRIER(state);
                    state[1] += sink(i);
                }
                return sink(state[1]);
            }
            long ggml_graph_compute(long *state) {
                long prepared = prepare(state);
                long computed = ggml_graph_compute_thread(state);
                return computed + prepared + sink(computed);
            }
            """;

    @TempDir
    Path dir;

    private Path compileGgmlLike(String name, int decoyBarriers, boolean gomp) throws Exception {
        Path source = dir.resolve("ggml-like.c");
        Files.writeString(source, GGML_LIKE);
        Path library = dir.resolve(name);
        List<String> command = new ArrayList<>(List.of("cc", "-shared", "-fPIC", "-O2",
                "-DDECOY_BARRIERS=" + decoyBarriers, "-o", library.toString(), source.toString()));
        if (gomp) {
            command.add(3, "-DGOMP");
        }
        TestTools.run(command.toArray(String[]::new));
        return library;
    }

    /** What recovery must return for {@code original}: its one node-loop symbol, as an EH_FRAME local. */
    private static ElfSymbol expectedFrom(Path original) throws Exception {
        try (ElfFile elf = ElfFile.open(original)) {
            assertTrue(!elf.isStripped(), original + " is already stripped: no .symtab oracle");
            List<ElfSymbol> loops = elf.functionAndClones(NODE_LOOP);
            assertEquals(1, loops.size(), original + ": node loop symbols " + loops);
            ElfSymbol loop = loops.getFirst();
            return new ElfSymbol(NODE_LOOP, loop.vaddr(), loop.sizeBytes(), SymbolBinding.LOCAL, SymbolTable.EH_FRAME);
        }
    }

    private static Optional<ElfSymbol> recover(Path library, String name) throws Exception {
        try (ElfFile elf = ElfFile.open(library)) {
            return StrippedFunctions.recover(elf, name);
        }
    }

    private Path stripped(Path library) throws Exception {
        Path copy = TestTools.strippedCopy(library, dir);
        try (ElfFile elf = ElfFile.open(copy)) {
            assertTrue(elf.isStripped(), "strip --strip-all left a .symtab in " + copy);
            assertEquals(List.of(), elf.functionAndClones(NODE_LOOP), "strip left the node loop named in " + copy);
        }
        return copy;
    }

    @Test
    void compiledLoopIsRecoveredAtItsSymtabAddressThroughGgmlBarrierOrGompBarrier() throws Exception {
        for (boolean gomp : List.of(false, true)) {
            Path library = compileGgmlLike(gomp ? "libgomp-like.so" : "libggml-like.so", 1, gomp);
            ElfSymbol expected = expectedFrom(library);
            assertEquals(Optional.of(expected), recover(stripped(library), NODE_LOOP), gomp ? "GOMP_barrier" : "ggml_barrier");
        }
    }

    @Test
    void twoCalleesThatBothReachTheBarrierTwiceGiveNoGuess() throws Exception {
        Path library = compileGgmlLike("libambiguous.so", 2, false);
        Path copy = stripped(library);
        assertEquals(Optional.empty(), recover(copy, NODE_LOOP), "the decoy also calls ggml_barrier twice");
        // the same source with a one-barrier decoy is recovered: the ambiguity, not the build, made it empty
        assertTrue(recover(stripped(compileGgmlLike("libunambiguous.so", 1, false)), NODE_LOOP).isPresent());
    }

    @Test
    void anUnstrippedLibraryOrAnotherNameGivesNothing() throws Exception {
        Path library = compileGgmlLike("libggml-like.so", 1, false);
        assertEquals(Optional.empty(), recover(library, NODE_LOOP), "unstripped: the .symtab already names it");
        Path copy = stripped(library);
        for (String other : List.of("ggml_graph_compute", "ggml_barrier", "prepare", NODE_LOOP + ".isra.0",
                "ggml_graph_compute_threads", "")) {
            assertEquals(Optional.empty(), recover(copy, other), "name " + other);
        }
    }

    @Test
    void llamaCpuLibrariesStrippedGiveTheOriginalsNodeLoop() throws Exception {
        List<Path> libraries = CallSiteScannerTest.llamaCpuLibraries();
        List<String> wrong = new ArrayList<>();
        for (Path library : libraries) {
            ElfSymbol expected = expectedFrom(library);
            assertEquals(Optional.empty(), recover(library, NODE_LOOP), library + " unstripped");
            Path copy = stripped(library);
            Optional<ElfSymbol> recovered = recover(copy, NODE_LOOP);
            if (!recovered.equals(Optional.of(expected))) {
                wrong.add(library.getFileName() + ": expected " + expected + ", recovered " + recovered);
            }
            assertEquals(Optional.empty(), recover(copy, "ggml_graph_compute"), library + ": another name");
            Files.delete(copy);
        }
        assertEquals(List.of(), wrong, "of " + libraries.size() + " libraries");
        assertTrue(libraries.size() >= 2, "source build and at least one prebuilt variant: " + libraries);
    }

    /**
     * Debian's libggml-cpu-*.so for {@code machine}, as its package installs them (stripped, no debug symbols to
     * compare): from the root when it is the host's architecture, from foreign-arch/ when it is the other one.
     * Skips locally, fails under CI=true (setup.sh provisions both).
     */
    private static List<Path> debianVariants(Machine machine) throws Exception {
        String debianArch = machine == Machine.AARCH64 ? "arm64" : "amd64";
        String backends = "usr/lib/" + machine.debianMultiarch() + "/ggml/backends0";
        List<Path> candidates = new ArrayList<>();
        for (Path dir : DEBIAN_DIRS) {
            candidates.add(dir.resolve("root").resolve(backends));
            candidates.add(dir.resolve("foreign-arch").resolve(debianArch).resolve(backends));
        }
        Path found = candidates.stream().filter(Files::isDirectory).findFirst().orElse(null);
        TestTools.requireOrSkip(found != null, "Debian sid's libggml0:" + debianArch + " absent: run"
                + " src/scripts/provision-distro-llama.sh (setup.sh does); looked in " + candidates);
        try (Stream<Path> files = Files.list(found)) {
            List<Path> variants = files.filter(p -> p.getFileName().toString().matches("libggml-cpu-.*\\.so"))
                    .sorted().toList();
            assertTrue(!variants.isEmpty(), "no libggml-cpu-*.so in " + found);
            return variants;
        }
    }

    /**
     * Each variant's node loop recovered: an unwind-table function that ggml_graph_compute calls directly and
     * that calls ggml_barrier at least twice (after each node, after the loop). Failures are listed together.
     */
    private static void assertDebianVariantsRecovered(Machine machine) throws Exception {
        List<Path> variants = debianVariants(machine);
        List<String> failures = new ArrayList<>();
        for (Path variant : variants) {
            try (ElfFile elf = ElfFile.open(variant)) {
                assertEquals(machine, elf.machine(), variant.toString());
                assertTrue(elf.isStripped(), variant + " has a .symtab: not the stripped case this covers");
                Optional<ElfSymbol> loop = StrippedFunctions.recover(elf, NODE_LOOP);
                if (loop.isEmpty()) {
                    failures.add(variant.getFileName() + ": not recovered");
                    continue;
                }
                long vaddr = loop.get().vaddr();
                Optional<EhFrameIndex.Range> range = EhFrameIndex.of(elf).startingAt(vaddr);
                int barriers = CallSiteScanner.findCallsMatching(elf, loop.get(), "ggml_barrier"::equals).size();
                ElfSymbol compute = elf.function("ggml_graph_compute").orElseThrow();
                long callsToLoop = CallSiteScanner.directCalls(elf, compute).stream()
                        .filter(c -> c.targetVaddr() == vaddr).count();
                if (barriers < 2 || callsToLoop < 1 || loop.get().table() != SymbolTable.EH_FRAME
                        || !range.equals(Optional.of(new EhFrameIndex.Range(vaddr, loop.get().sizeBytes())))) {
                    failures.add(variant.getFileName() + ": " + loop.get() + " (unwind range " + range + ") with "
                            + barriers + " ggml_barrier calls, called " + callsToLoop + "x by ggml_graph_compute");
                }
            }
        }
        assertEquals(List.of(), failures, "of " + variants.size() + " " + machine + " variants");
    }

    @Test
    void debianAmd64StrippedVariantsAreRecoveredAndTheirLoopCallsGgmlBarrier() throws Exception {
        assertDebianVariantsRecovered(Machine.X86_64);
    }

    /** The same on aarch64, whose loop is reached by {@code bl} (decoded by {@link CallSiteScanner}). */
    @Test
    void debianArm64StrippedVariantsAreRecoveredAndTheirLoopCallsGgmlBarrier() throws Exception {
        assertDebianVariantsRecovered(Machine.AARCH64);
    }
}
