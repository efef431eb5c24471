package dev.infertop.process;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ggml's node loop inlined into ggml_graph_compute with ggml_barrier a lone read of the thread count (ggml's
 * OpenMP code compiled without OpenMP), on code compiled that way here by clang and gcc, and on the real object
 * that has it (@fugood/llama.node's addon). The oracle is the compiler's own line table: each read's inline chain,
 * read back with {@code addr2line -i} from the -g build.
 */
class InlinedNodeLoopTest {
    @TempDir
    Path dir;

    /**
     * ggml-cpu's OpenMP path with its pragmas dropped, cut down: the thread function inlined once, the barrier a
     * relaxed load whose value decides nothing, an op inlined into the loop with a barrier of its own.
     */
    private static final String SOURCE = """
            #include <stdatomic.h>
            struct tensor { int op; int flags; long ne[4]; struct tensor *src[2]; };
            struct cgraph { int size; int n_nodes; struct tensor **nodes; };
            struct state;
            struct threadpool { long pad[13]; atomic_int n_threads_cur; atomic_int abort; int ec; struct state *workers; struct cgraph *cgraph; struct cplan *cplan; };
            struct cplan { int (*abort_callback)(void *); void *abort_callback_data; struct threadpool *tp; };
            struct params { int ith; int nth; struct threadpool *tp; };
            struct state { int ith; struct threadpool *tp; };
            extern int omp_get_num_threads(void);
            extern int omp_get_thread_num(void);
            extern int ggml_is_empty(const struct tensor *);
            extern void work(struct tensor *, int ith, int nth);
            static inline __attribute__((always_inline)) void barrier(struct threadpool *tp) {
                int n_threads = atomic_load_explicit(&tp->n_threads_cur, memory_order_relaxed);
                if (n_threads == 1) {
                    return;
                }
            }
            void ggml_barrier(struct threadpool *tp) { barrier(tp); }
            static inline __attribute__((always_inline)) void op_with_barrier(const struct params *p, struct tensor *t) {
                work(t, p->ith, p->nth);
                barrier(p->tp); /* LINE_OP */
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
            static inline __attribute__((always_inline)) int compute_thread(struct state *st) {
                struct cgraph *cg = st->tp->cgraph;
                struct cplan *cplan = st->tp->cplan;
                struct params params = { st->ith, atomic_load_explicit(&st->tp->n_threads_cur, memory_order_relaxed), st->tp }; /* LINE_NTH */
                for (int node_n = 0; node_n < cg->n_nodes && atomic_load_explicit(&st->tp->abort, memory_order_relaxed) != node_n; node_n++) {
                    struct tensor *node = cg->nodes[node_n];
                    if (node->op >= 36 && node->op <= 39) continue;
                    if ((node->flags & 16) == 0) continue;
                    compute_forward(&params, node);
                    if (st->ith == 0 && cplan->abort_callback && cplan->abort_callback(cplan->abort_callback_data)) {
                        atomic_store_explicit(&st->tp->abort, node_n + 1, memory_order_relaxed);
                    }
                    if (node_n + 1 < cg->n_nodes) {
                        barrier(st->tp); /* LINE_IN_LOOP */
                    }
                }
                barrier(st->tp); /* LINE_AFTER */
                return 0;
            }
            int ggml_graph_compute(struct cgraph *cg, struct cplan *cplan) {
                struct threadpool *tp = cplan->tp;
                tp->cgraph = cg;
                tp->cplan = cplan;
                atomic_store_explicit(&tp->abort, -1, memory_order_relaxed);
                int worker = 0;
                if (cg->size > 1) {
                    atomic_store_explicit(&tp->n_threads_cur, omp_get_num_threads(), memory_order_relaxed);
                    worker = omp_get_thread_num();
                } else {
                    atomic_store_explicit(&tp->n_threads_cur, 1, memory_order_relaxed);
                }
                compute_thread(&tp->workers[worker]);
                return tp->ec;
            }
            """;

    @Test
    void clangAndGccBuildsHaveTheirLoopsPlacesFound() throws Exception {
        check("clang");
        check("gcc");
    }

    /** The addon the LinkedInAppIT runs: its places, read from its disassembly once and pinned to its version. */
    @Test
    void theLlamaNodeAddonsInlinedLoopIsFound() throws Exception {
        Path addon = TestTools.WORKLOAD.getParent().resolve(
                "llama-node-1.7.15/node_modules/@fugood/node-llama-linux-x64/index.node");
        TestTools.requireOrSkip(Files.isRegularFile(addon),
                "needs @fugood/llama.node 1.7.15: run src/scripts/provision-llama-node.sh (" + addon + ")");
        try (ElfFile elf = ElfFile.open(addon)) {
            InlinedNodeLoop.Sites sites = InlinedNodeLoop.find(elf).orElseThrow(
                    () -> new AssertionError("no inlined node loop found in " + addon));
            assertEquals(0x68, sites.threadCountOffset());
            assertEquals(List.of(0x6cf57cL, 0x6cf6abL, 0x6d1147L),
                    List.of(sites.threadStartVaddr(), sites.inLoopVaddr(), sites.afterLoopVaddr()), sites.toString());
        }
    }

    /** A build with ggml_graph_compute_thread of its own (every other one) is not this shape. */
    @Test
    void aLoopWithAFunctionOfItsOwnIsNotReported() throws Exception {
        for (Path library : CallSiteScannerTest.llamaCpuLibraries()) {
            try (ElfFile elf = ElfFile.open(library)) {
                assertEquals(Optional.empty(), InlinedNodeLoop.find(elf), library.toString());
            }
        }
    }

    private void check(String compiler) throws Exception {
        Path source = dir.resolve("loop.c");
        Files.writeString(source, SOURCE);
        Path library = dir.resolve("libloop-" + compiler + ".so");
        TestTools.run(compiler, "-O2", "-g", "-fPIC", "-shared", "-o", library.toString(), source.toString());
        Map<String, Integer> lines = new HashMap<>();
        String[] sourceLines = SOURCE.split("\n", -1);
        for (int i = 0; i < sourceLines.length; i++) {
            for (String marker : List.of("LINE_NTH", "LINE_IN_LOOP", "LINE_AFTER", "LINE_OP")) {
                if (sourceLines[i].contains(marker + " ")) {
                    lines.put(marker, i + 1);
                }
            }
        }
        try (ElfFile elf = ElfFile.open(library)) {
            Optional<InlinedNodeLoop.Sites> found = InlinedNodeLoop.find(elf);
            assertTrue(found.isPresent(), compiler + ": no inlined node loop found");
            InlinedNodeLoop.Sites sites = found.get();
            String what = compiler + ": " + sites;
            assertEquals("LINE_NTH", marker(library, sites.threadStartVaddr(), lines), what);
            assertEquals("LINE_IN_LOOP", marker(library, sites.inLoopVaddr(), lines), what);
            assertEquals("LINE_AFTER", marker(library, sites.afterLoopVaddr(), lines), what);
            assertEquals(0x68, sites.threadCountOffset(), what);
        }
    }

    /** The marker of the first line in {@code vaddr}'s inline chain that has one; "none" else. */
    private static String marker(Path library, long vaddr, Map<String, Integer> lines) throws Exception {
        for (String line : TestTools.run("addr2line", "-i", "-e", library.toString(), Long.toHexString(vaddr))
                .strip().split("\n")) {
            int number = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1).split(" ")[0]);
            for (Map.Entry<String, Integer> marker : lines.entrySet()) {
                if (marker.getValue() == number) {
                    return marker.getKey();
                }
            }
        }
        return "none";
    }
}
