package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The node loop's barrier calls told from an inlined op's, on code compiled the way ggml's is (x86-64 with gcc,
 * aarch64 with Debian's cross gcc; with and without the stack protector). The oracle is the compiler's own line
 * table: each call site's source line, read back with addr2line from the -g build.
 */
class NodeLoopBarriersTest {
    @TempDir
    Path dir;

    /** ggml-cpu's node loop, cut down: an op inlined into it calls the barrier itself (as mul_mat_id does). */
    private static final String SOURCE = """
            #include <stdatomic.h>
            struct tensor { int op; int flags; long ne[4]; struct tensor *src[2]; };
            struct cgraph { int n_nodes; struct tensor **nodes; };
            struct threadpool { atomic_int abort; int n_threads; };
            struct cplan { int (*abort_callback)(void *); void *abort_callback_data; };
            struct params { int ith; int nth; struct threadpool *tp; };
            struct state { int ith; struct threadpool *tp; struct cgraph *cgraph; struct cplan *cplan; };
            __attribute__((noinline)) void ggml_barrier(struct threadpool *tp) { atomic_fetch_add(&tp->n_threads, 0); }
            extern int ggml_is_empty(const struct tensor *);
            extern void work(struct tensor *, int ith, int nth);
            static inline __attribute__((always_inline)) void op_with_barrier(const struct params *p, struct tensor *t) {
                work(t, p->ith, p->nth);
                ggml_barrier(p->tp); /* LINE_OP */
                work(t->src[0], p->ith, p->nth);
            }
            static inline __attribute__((always_inline)) void compute_forward(const struct params *p, struct tensor *t) {
                if (t->op == 0 || ggml_is_empty(t)) return;
                switch (t->op) {
                case 7: op_with_barrier(p, t); break;
                case 9: work(t->src[1], p->ith, p->nth); break;
                default: work(t, p->ith, p->nth);
                }
            }
            static int ggml_graph_compute_thread(struct state *st) {
                struct cgraph *cg = st->cgraph;
                struct cplan *cplan = st->cplan;
                struct params params = { st->ith, st->tp->n_threads, st->tp };
                for (int node_n = 0; node_n < cg->n_nodes && atomic_load_explicit(&st->tp->abort, memory_order_relaxed) != node_n; node_n++) {
                    struct tensor *node = cg->nodes[node_n];
                    if (node->op >= 36 && node->op <= 39) continue;
                    if ((node->flags & 16) == 0) continue;
                    compute_forward(&params, node);
                    if (st->ith == 0 && cplan->abort_callback && cplan->abort_callback(cplan->abort_callback_data)) {
                        atomic_store_explicit(&st->tp->abort, node_n + 1, memory_order_relaxed);
                    }
                    if (node_n + 1 < cg->n_nodes) {
                        ggml_barrier(st->tp); /* LINE_IN_LOOP */
                    }
                }
                ggml_barrier(st->tp); /* LINE_AFTER */
                return 0;
            }
            int (*volatile thread_entry)(struct state *) = ggml_graph_compute_thread;
            int run_one(struct state *st, char *name_out) {
                char scratch[64]; /* an array on the stack: the stack protector guards this function */
                __builtin_memcpy(scratch, name_out, 8);
                int r = ggml_graph_compute_thread(st);
                __builtin_memcpy(name_out, scratch, 8);
                return r;
            }
            """;

    @Test
    void x86_64LoopCallsChosenAndTheInlinedOpsLeft() throws Exception {
        check("gcc", "addr2line", "-fno-stack-protector");
        check("gcc", "addr2line", "-fstack-protector-all");
    }

    @Test
    void aarch64LoopCallsChosenAndTheInlinedOpsLeft() throws Exception {
        TestTools.requireOrSkip(Files.isExecutable(Path.of("/usr/bin/aarch64-linux-gnu-gcc")),
                "needs Debian's gcc-aarch64-linux-gnu (src/scripts/setup.sh installs it)");
        check("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-addr2line", "-fno-stack-protector");
        check("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-addr2line", "-fstack-protector-all");
    }

    /**
     * Every provisioned llama.cpp CPU backend (the source build, npm's prebuilt variants) has the loop's shape,
     * and there it picks what address order did before, where every graph was attributed (LlamaBenchIT).
     */
    @Test
    void provisionedBuildsHaveTheLoopsShape() throws Exception {
        for (Path library : CallSiteScannerTest.llamaCpuLibraries()) {
            try (ElfFile elf = ElfFile.open(library)) {
                ElfSymbol loop = elf.functionAndClones("ggml_graph_compute_thread").getFirst();
                List<CallSite> calls = CallSiteScanner.findCalls(elf, loop, "ggml_barrier");
                NodeLoopBarriers.Choice choice = NodeLoopBarriers.choose(elf, loop, calls);
                assertEquals(NodeLoopBarriers.Rule.LOOP_SHAPE, choice.rule(), library.toString());
                assertEquals(calls.subList(0, 2), choice.sites(), library.toString());
            }
        }
    }

    /**
     * The arm64 build the emulated stage traces (provision-arm64.sh): GCC duplicates the after-loop call, so the
     * loop makes three of the function's barrier calls and the first two in address order miss the in-loop one
     * (Arm64EmulatedIT attributes every graph with the three). Checked here against the code itself: each chosen
     * call returns straight on or reaches the loop's condition, and the in-loop one is the last of the three.
     */
    @Test
    void theCrossBuiltArm64LibraryHasThreeLoopCalls() throws Exception {
        Path library = TestTools.WORKLOAD.resolve("build-arm64/bin/libggml-cpu.so");
        TestTools.requireOrSkip(Files.isRegularFile(library),
                "the arm64 cross build is absent: run src/scripts/provision-arm64.sh (" + library + ")");
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSymbol loop = elf.functionAndClones("ggml_graph_compute_thread").getFirst();
            List<CallSite> calls = CallSiteScanner.findCalls(elf, loop, "ggml_barrier");
            NodeLoopBarriers.Choice choice = NodeLoopBarriers.choose(elf, loop, calls);
            assertEquals(NodeLoopBarriers.Rule.LOOP_SHAPE, choice.rule(), library.toString());
            assertEquals(calls.subList(0, 3), choice.sites(), "the first three of " + calls);
            assertTrue(calls.size() > 3, "op code inlined into the loop calls the barrier too: " + calls);
        }
    }

    private void check(String compiler, String addr2line, String protector) throws Exception {
        Path source = dir.resolve("loop.c");
        Files.writeString(source, SOURCE);
        Path library = dir.resolve("libloop-" + compiler + protector + ".so");
        TestTools.run(compiler, "-O2", "-g", "-fPIC", "-shared", protector, "-o", library.toString(), source.toString());
        Map<String, Integer> lines = new HashMap<>();
        String[] sourceLines = SOURCE.split("\n", -1);
        for (int i = 0; i < sourceLines.length; i++) {
            for (String marker : List.of("LINE_OP", "LINE_IN_LOOP", "LINE_AFTER")) {
                if (sourceLines[i].contains(marker + " ")) {
                    lines.put(marker, i + 1);
                }
            }
        }
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSymbol loop = elf.functionAndClones("ggml_graph_compute_thread").getFirst();
            List<CallSite> calls = CallSiteScanner.findCalls(elf, loop, "ggml_barrier");
            Map<Long, String> markerAt = new HashMap<>();
            for (CallSite call : calls) {
                String line = TestTools.run(addr2line, "-e", library.toString(), Long.toHexString(call.vaddr())).strip();
                int number = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1).split(" ")[0]);
                lines.forEach((marker, n) -> {
                    if (n == number) {
                        markerAt.put(call.vaddr(), marker);
                    }
                });
            }
            String what = compiler + " " + protector + ": " + markerAt;
            assertEquals(calls.size(), markerAt.size(), "every barrier call has a marked line: " + what);
            assertTrue(markerAt.containsValue("LINE_OP"), "the op is inlined with its barrier: " + what);
            NodeLoopBarriers.Choice choice = NodeLoopBarriers.choose(elf, loop, calls);
            assertEquals(NodeLoopBarriers.Rule.LOOP_SHAPE, choice.rule(), what);
            List<Long> expected = new ArrayList<>();
            Set<String> chosenMarkers = new TreeSet<>();
            for (CallSite call : calls) {
                if (!markerAt.get(call.vaddr()).equals("LINE_OP")) {
                    expected.add(call.vaddr());
                }
            }
            for (CallSite call : choice.sites()) {
                chosenMarkers.add(markerAt.get(call.vaddr()));
            }
            assertEquals(expected, choice.sites().stream().map(CallSite::vaddr).toList(), what);
            assertEquals(Set.of("LINE_AFTER", "LINE_IN_LOOP"), chosenMarkers, what);
        }
    }
}
