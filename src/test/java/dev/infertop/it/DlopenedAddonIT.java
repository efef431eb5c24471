package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An object that holds ggml code under a name like none of llama.cpp's ({@code late.node}, as a Node addon is
 * named), dlopen'ed by the traced process after infertop attached: the session's rescans of the maps must find
 * it by what it defines and probe it, as they probe a libggml backend loaded late.
 */
class DlopenedAddonIT {
    @TempDir
    Path dir;

    /** What the process maps from the start: a llama.cpp library (so that -p has something to attach to). */
    private static final String FIRST = """
            int llama_decode(void *ctx, void *batch) { return ctx == batch; }
            """;

    /** The late object: a CPU graph compute, as ggml's, under an addon's name. */
    private static final String ADDON = """
            __attribute__((noinline)) int ggml_graph_compute(void *graph, void *plan) {
                __asm__ volatile("" ::: "memory");
                return graph == plan;
            }
            """;

    private static final String HOST = """
            #include <dlfcn.h>
            #include <stdio.h>
            #include <string.h>
            int llama_decode(void *ctx, void *batch);
            int main(int argc, char **argv) {
                static long graph[64];
                char line[64];
                printf("ready %d\\n", llama_decode(0, graph));
                fflush(stdout);
                if (!fgets(line, sizeof line, stdin)) return 2;
                void *addon = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
                if (!addon) { fprintf(stderr, "dlopen: %s\\n", dlerror()); return 1; }
                int (*compute)(void *, void *) = (int (*)(void *, void *)) dlsym(addon, "ggml_graph_compute");
                printf("loaded\\n");
                fflush(stdout);
                if (!fgets(line, sizeof line, stdin)) return 2;
                int graphs = atoi(argv[2]);
                for (int i = 0; i < graphs; i++) compute(graph, 0);
                printf("done %d\\n", graphs);
                fflush(stdout);
                if (!fgets(line, sizeof line, stdin)) return 2;
                return 0;
            }
            """;

    @Test
    void anAddonDlopenedLaterIsProbedByWhatItDefines() throws Exception {
        Requirements.canTrace();
        Path first = Gcc.compile(dir, FIRST, "libllama-first.so", "-shared", "-fPIC");
        Path addon = Gcc.compile(dir, ADDON, "late.node", "-shared", "-fPIC");
        Path host = Gcc.compile(dir, HOST.replace("#include <string.h>", "#include <string.h>\n#include <stdlib.h>"),
                "addon-host", "-L" + dir, "-l:libllama-first.so", "-Wl,-rpath," + dir, "-ldl");
        int graphs = 37;
        Process target = new ProcessBuilder(host.toString(), addon.toString(), Integer.toString(graphs))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out = target.inputReader(StandardCharsets.UTF_8);
             Writer in = target.outputWriter(StandardCharsets.UTF_8)) {
            assertTrue(out.readLine().startsWith("ready"), "the host started");
            try (InfertopProcess infertop = InfertopProcess.start(Map.of(), "--json", "-d", "0.5", "--layers",
                    "token,graph", "-p", Long.toString(target.pid()))) {
                infertop.awaitStderr("infertop: tracing pid", 120);
                in.write("load\n");
                in.flush();
                assertEquals("loaded", out.readLine());
                // A rescan of the maps (every few intervals) finds late.node and attaches to it.
                infertop.awaitStdout("late.node", 60);
                in.write("run\n");
                in.flush();
                assertEquals("done " + graphs, out.readLine());
                Thread.sleep(1500); // two intervals: every record drained
                LlamaBenchIT.signal(infertop.process.pid(), "TERM");
                assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
                JsonNode total = infertop.finalObject();
                String context = "infertop: " + total + "\nstderr: " + infertop.stderrText();
                assertTrue(total.path("layers").path("graph").path("probes").toString().contains("late.node"),
                        "graph probes on the late object: " + context);
                assertEquals(graphs, total.path("cpu_graph_computes").asLong(), context);
                assertEquals(0, total.path("lost_events").asLong(), context);
            }
            in.write("exit\n");
            in.flush();
            assertTrue(target.waitFor(30, TimeUnit.SECONDS), "the host did not exit");
        } finally {
            target.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        LeakCheck.assertNothingLeft();
    }
}
