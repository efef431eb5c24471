package dev.infertop.it;

import dev.infertop.process.CraftedStrippedElf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Libraries crafted to make their scan slow ({@link CraftedStrippedElf}): a stripped one with 200,000 calls to
 * look up among 150,000 functions (few enough that the rest of its reading ends within the limit: the lookups
 * run on after it, touching no file), and one with 65,000 PT_LOAD segments and 400,000 functions besides, given with {@code --lib} to a
 * session tracing a small process. infertop's scan of each used to be given up by the time limit and go on,
 * on a thread no one waited for, for hours: a core lost beside the traced workload. Now the first is read with
 * indexed lookups (or, on a loaded machine, given up on by the limit, its thread stopping at its next check) and
 * the second refused in one line, and no scan thread is left once the probes are attached.
 */
class HostileScanIT {
    @TempDir
    Path dir;

    private static final String LIBRARY = """
            /* A token-layer probe site, so that the session has something to attach to. */
            int llama_decode(void *ctx, void *batch) { return ctx == batch; }
            """;

    private static final String HOST = """
            #include <dlfcn.h>
            #include <stdio.h>
            #include <unistd.h>
            int main(int argc, char **argv) {
                if (!dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) {
                    fprintf(stderr, "dlopen %s: %s\\n", argv[1], dlerror());
                    return 1;
                }
                printf("ready\\n");
                fflush(stdout);
                for (;;) pause();
            }
            """;

    private Path compile(String source, String output, String... flags) throws Exception {
        return Gcc.compile(dir, source, output, flags);
    }

    @Test
    void craftedLibrariesLeaveNoScanThreadBehind() throws Exception {
        Requirements.canTrace();
        Path llama = compile(LIBRARY, "libllama-fake.so", "-shared", "-fPIC");
        Path host = compile(HOST, "scan-host", "-ldl");
        Path stripped = CraftedStrippedElf.write(dir.resolve("libggml-stripped.so"), 1, 200_000, 150_000);
        Path loads = CraftedStrippedElf.write(dir.resolve("libggml-loads.so"), 65_000, 200_000, 400_000);

        Process target = new ProcessBuilder(host.toString(), llama.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("ready", out.readLine(), "the host mapped its library");
            try (InfertopProcess infertop = InfertopProcess.start(Map.of(), "--batch", "-d", "0.5",
                    "--layers", "token", "--lib", stripped.toString(), "--lib", loads.toString(),
                    "-p", Long.toString(target.pid()))) {
                // Each library's scan is bounded by the time limit (10 s): generous for a loaded machine.
                infertop.awaitStderr("probes attached", 180);
                long jvm = infertop.process.pid();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                List<String> scans = scanThreads(jvm);
                while (!scans.isEmpty() && System.nanoTime() < deadline && infertop.process.isAlive()) {
                    Thread.sleep(200);
                    scans = scanThreads(jvm);
                }
                String shown = "\nstderr:\n" + String.join("\n", infertop.stderr);
                System.out.println("scan threads left: " + scans + shown);
                assertTrue(infertop.process.isAlive(), "the session goes on" + shown);
                assertEquals(List.of(), scans, "scan threads still running 90 s after the probes were attached"
                        + shown);
                List<String> aboutLoads = infertop.stderr.stream().filter(l -> l.contains(loads.toString())).toList();
                assertEquals(List.of("infertop: skipped a library: corrupt ELF file " + loads
                        + ": 65000 PT_LOAD segments (at most 128 read)"), aboutLoads, shown);
                // The stripped one is read within the limit or given up on (a loaded machine): either way its
                // thread is gone, above.
                LlamaBenchIT.signal(jvm, "TERM");
                assertEquals(128 + 15, infertop.waitFor(30), shown);
            }
        } finally {
            target.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        LeakCheck.assertNothingLeft();
    }

    /** The threads of process {@code pid} named infertop-scan (ScanTimeLimit's), as "TID: state". */
    private static List<String> scanThreads(long pid) throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks.toList()) {
                try {
                    if (Files.readString(task.resolve("comm")).strip().equals("infertop-scan")) {
                        String stat = Files.readString(task.resolve("stat"));
                        found.add(task.getFileName() + ": " + stat.substring(stat.lastIndexOf(')') + 2,
                                stat.lastIndexOf(')') + 3));
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return found;
    }
}
