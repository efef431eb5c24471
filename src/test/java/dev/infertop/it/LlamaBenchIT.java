package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real probes on a real llama.cpp: infertop's token and graph counts must equal what llama-bench did.
 *
 * <p>{@code llama-bench -p 64 -n 32 -r 3} runs two tests, each preceded by one warm-up run:
 * pp64 = 1 + 3 llama_decode calls of 64 tokens; tg32 = 1 warm-up call of 1 token + 3 × 32 calls of 1 token.
 * Every call fits one ubatch, so each computes exactly one graph, on the CPU backend.
 */
class LlamaBenchIT {
    private static final LlamaBenchRun BENCH = new LlamaBenchRun(64, 32, 3);

    private static LlamaCppWorkload workload;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() {
        workload = Requirements.canTraceLlamaCpp();
        tinyModel = Models.preset("tiny");
    }

    private static List<String> benchArguments(Path bench, Path model) {
        return List.of(bench.toString(), "-m", model.toString(), "-p", Integer.toString(BENCH.promptTokens()),
                "-n", Integer.toString(BENCH.generatedTokens()), "-r", Integer.toString(BENCH.repetitions()), "-t", "2");
    }

    private static JsonNode traceLaunched(Map<String, String> environment, Path bench, Path model) throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(InfertopProcess.env(environment));
        args.add("--");
        args.addAll(benchArguments(bench, model));
        try (InfertopProcess infertop = InfertopProcess.start(environment, args.toArray(String[]::new))) {
            int status = infertop.waitFor(240);
            assertEquals(0, status, "infertop exit status; stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals("exited", total.get("target_state").asText());
            return total;
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    private static void assertCountsMatchLlamaBench(JsonNode total) {
        BENCH.assertTokenCounts(total);
        assertEquals(BENCH.prefillCalls() + BENCH.generationRuns(), total.get("ttft_ms").get("count").asLong());
        assertEquals(BENCH.generatedTokensCounted(), total.get("tpot_ms").get("count").asLong());
        assertEquals(BENCH.calls(), total.get("graph_computes").get("CPU").asLong(), "one CPU graph per call");
        assertEquals(BENCH.calls(), total.get("cpu_graph_computes").asLong());
        assertTrue(total.get("graph_nodes").get("CPU").asLong() > BENCH.calls() * 10, "graphs have nodes");
        assertEquals(0, total.get("lost_events").asLong());
        assertEquals("on", total.get("layers").get("token").get("state").asText());
        assertEquals("on", total.get("layers").get("graph").get("state").asText());
    }

    @Test
    void launchedSourceBuildCountsEqualLlamaBench() throws Exception {
        JsonNode total = traceLaunched(Map.of(), workload.sourceBuildTool("llama-bench"), tinyModel);
        assertCountsMatchLlamaBench(total);
        assertTrue(total.get("model").asText().endsWith(".gguf"), "model file seen in the target's maps");
    }

    @Test
    void launchedPrebuiltNpmLibrariesCountsEqualLlamaBench() throws Exception {
        JsonNode total = traceLaunched(workload.prebuiltEnvironment(), workload.prebuiltDir().resolve("llama-bench"),
                tinyModel);
        assertCountsMatchLlamaBench(total);
        // The npm build starts every function with endbr64: the cheap placement skips it where a push follows.
        String tokenProbe = total.get("layers").get("token").get("probes").get(0).asText();
        assertTrue(tokenProbe.contains("libllama.v0.5.0.so"), tokenProbe);
        assertTrue(tokenProbe.contains("endbr64") && tokenProbe.contains("emulated"), tokenProbe);
        String graphProbes = total.get("layers").get("graph").get("probes").toString();
        assertTrue(graphProbes.contains("libggml-cpu-"), "the dlopen'ed CPU variant is probed: " + graphProbes);
    }

    @Test
    void attachedByPidCountsEqualLlamaBench() throws Exception {
        Path bench = workload.sourceBuildTool("llama-bench");
        Process target = new ProcessBuilder(benchArguments(bench, tinyModel))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            // Freeze it as soon as ld.so has mapped the libraries infertop probes (libggml-cpu last: libggml's
            // dependency, the deepest), i.e. before main() loads the model. The stop is a direct kill(2): a
            // spawned kill(1) took long enough on a loaded machine for the warm-up call to run first.
            awaitMapped(target.pid(), 10, "libllama.", "libggml-base.", "libggml-cpu.");
            Containers.signal(target.pid(), Containers.SIGSTOP);
            try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-p",
                    Long.toString(target.pid()))) {
                infertop.awaitStderr("probes attached", 60);
                Containers.signal(target.pid(), Containers.SIGCONT);
                assertTrue(target.waitFor(180, TimeUnit.SECONDS), "llama-bench finished");
                assertEquals(0, target.exitValue());
                assertEquals(0, infertop.waitFor(30), infertop.stderrText());
                JsonNode total = infertop.finalObject();
                assertEquals("exited", total.get("target_state").asText());
                assertCountsMatchLlamaBench(total);
            }
        } finally {
            target.destroyForcibly();
            LeakCheck.assertNothingLeft();
        }
    }

    /**
     * infertop's decode tokens/s (tokens over time inside one-token llama_decode calls) against llama-bench's
     * own tg figure, from the same traced run. On the 245 M-parameter model: on the 2.6 M one, llama-bench's
     * rep-to-rep spread on this machine is ±25 % and its mean of per-rep rates then differs from any
     * whole-run rate. A run whose reference is itself noisy (llama-bench's stddev above 10 % of its mean, e.g.
     * another process took the CPU) and infertop's figure outside it is repeated, at most three times; a
     * noisy reference that infertop's figure still meets is agreement all the same. llama-bench leaves its
     * warm-up out (one step, the first on a fresh context); infertop counts every step it saw and cannot tell which one that was,
     * so its rate over the steps llama-bench timed lies between its rate over every step and its rate without the
     * slowest one: that range must meet llama-bench's figure ± 5 % (CI once saw 46.1 tok/s against 50.8 with
     * every step counted, and no more was printed; the message now says what the steps took).
     */
    @Test
    void decodeSpeedIsWithinFivePercentOfLlamaBench() throws Exception {
        Path benchModel = Models.preset("bench");
        List<String> args = new ArrayList<>(List.of("--json", "--layers", "token,graph", "--"));
        args.addAll(benchArguments(workload.sourceBuildTool("llama-bench"), benchModel));
        String last = "";
        for (int attempt = 1; attempt <= 3; attempt++) {
            try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
                assertEquals(0, infertop.waitFor(300), infertop.stderrText());
                double[] reference = infertop.llamaBenchMeanAndStddev("tg" + BENCH.generatedTokens());
                JsonNode total = infertop.finalObject();
                double everyStep = total.get("decode_tokens_per_s").asDouble();
                JsonNode steps = total.get("tpot_ms");
                long count = steps.get("count").asLong();
                assertEquals(BENCH.generatedTokensCounted(), count, "one-token steps past position 0: " + steps);
                // One token a step: the steps' time is their count times their mean.
                double measured = (count - 1) * 1000.0
                        / (count * steps.get("mean").asDouble() - steps.get("max").asDouble());
                last = String.format(java.util.Locale.ROOT, "attempt %d: infertop %.2f tok/s without its slowest step "
                        + "(%.2f with it; steps %s), llama-bench %.2f ± %.2f", attempt, measured, everyStep, steps,
                        reference[0], reference[1]);
                System.out.println("decode speed " + last);
                boolean agrees = measured >= 0.95 * reference[0] && everyStep <= 1.05 * reference[0];
                if (!agrees && reference[1] > 0.10 * reference[0]) {
                    continue; // the reference itself was disturbed: measure again
                }
                assertTrue(agrees, last);
                return;
            } finally {
                LeakCheck.assertNothingLeft();
            }
        }
        throw new AssertionError("llama-bench's own tg figure never settled (stddev > 10 % of mean) in 3 runs and "
                + "infertop's did not meet it: a machine this busy cannot tell; " + last);
    }

    /**
     * Waits until the process maps a file whose name starts with each of {@code fileNamePrefixes} ("libllama."
     * matches libllama.so.0.5.0 and the npm build's libllama.v0.5.0.so, not libllama-bench-impl.so, which ld.so
     * maps first: a STOP right after that one froze a llama-bench without libllama, and CI saw the attach fail).
     */
    static void awaitMapped(long pid, long timeoutSeconds, String... fileNamePrefixes) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        Path maps = Path.of("/proc/" + pid + "/maps");
        while (System.nanoTime() < deadline) {
            try {
                String text = Files.readString(maps);
                if (java.util.Arrays.stream(fileNamePrefixes).allMatch(prefix -> text.contains("/" + prefix))) {
                    return;
                }
            } catch (IOException e) {
                // not yet readable
            }
            Thread.sleep(1);
        }
        throw new AssertionError("pid " + pid + " never mapped " + String.join(" and ", fileNamePrefixes));
    }

    static void signal(long pid, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        assertEquals(0, kill.waitFor(), "kill -" + signal + " " + pid);
    }
}
