package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.workload.LlamaCppWorkload;
import dev.infertop.workload.RouterDesign;
import dev.infertop.workload.SyntheticModel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MoE layer against ground truth: the synthetic tiny-moe model routes each token to experts designed in
 * advance (RouterDesign: Zipf(1) skew, 8 experts, 2 per token, layer l = layer 0 rotated by l), and
 * llama-bench feeds uniformly random tokens, so each expert's selection count in a layer is
 * Binomial(N, f) with f known exactly.
 *
 * <p>{@code llama-bench -p 64 -n 96 -r 4}: pp64 = 5 llama_decode calls of 64 tokens (1 warm-up), tg96 = 1 + 4 × 96
 * calls of 1 token. Each call is one CPU graph. The first token of every prompt and of every generation run
 * is BOS (not random): 5 + 5 tokens, allowed for on top of the binomial tolerance.
 *
 * <p>Every token row must be read: the probes plan each graph while the operator layer walks it, so the
 * count of rows read per layer equals what llama-bench ran (the last layer: one row per call).
 */
class MoeExpertIT {
    private static final int PROMPT_TOKENS = 64;
    private static final int GENERATED_TOKENS = 96;
    private static final int REPETITIONS = 4;
    /** Standard deviations allowed per count: a false failure once in ~150 000 counts. */
    private static final double SIGMAS = 4.5;

    private static LlamaCppWorkload workload;
    private static Path model;

    @BeforeAll
    static void requirements() {
        workload = Requirements.canTraceLlamaCpp();
        model = Models.preset("tiny-moe");
    }

    @Test
    void sourceBuildExpertFrequenciesMatchTheDesignedRouterAndEveryTokenRowIsRead() throws Exception {
        check(Map.of(), workload.sourceBuildTool("llama-bench"));
    }

    /** The npm prebuilt libraries: endbr64 prologues, a dlopen'ed CPU variant with its own node loop. */
    @Test
    void prebuiltLibrariesExpertFrequenciesMatchTheDesignedRouterAndEveryTokenRowIsRead() throws Exception {
        check(workload.prebuiltEnvironment(), workload.prebuiltDir().resolve("llama-bench"));
    }

    private static void check(Map<String, String> environment, Path bench) throws Exception {
        // --budget 0: every graph traced (the heatmap is a window figure; this run's rows are all counted)
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--layers", "token,graph,moe",
                "--budget", "0"));
        args.addAll(InfertopProcess.env(environment));
        args.addAll(List.of("--", bench.toString(), "-m", model.toString(),
                "-p", Integer.toString(PROMPT_TOKENS), "-n", Integer.toString(GENERATED_TOKENS),
                "-r", Integer.toString(REPETITIONS), "-t", "2"));
        JsonNode total;
        String stderr;
        try (InfertopProcess infertop = InfertopProcess.start(environment, args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(240), infertop.stderrText());
            total = infertop.finalObject();
            stderr = infertop.stderrText();
        } finally {
            LeakCheck.assertNothingLeft();
        }
        // moe without operator: the operator layer is switched on, with a notice.
        assertTrue(stderr.contains("switching the operator layer on too"), stderr);
        assertEquals("on", total.get("layers").get("operator").get("state").asText(), total.toString());
        assertEquals("on", total.get("layers").get("moe").get("state").asText(), total.toString());
        // The MoE layer numbers a thread's groups by its fused calls: they are probed, not inferred.
        String operatorProbes = total.get("layers").get("operator").get("probes").toString();
        assertFalse(operatorProbes.contains("not probed"), operatorProbes);
        assertTrue(operatorProbes.contains("_fused call in"), operatorProbes);
        assertRoutingMatchesTheDesign(total, PROMPT_TOKENS, GENERATED_TOKENS, REPETITIONS);
        JsonNode hottest = total.get("moe").get("per_expert").get("0");
        assertTrue(hottest.get("active_nodes").asLong() > 0 && hottest.get("node_p50_ms").asDouble() > 0, hottest.toString());
        assertTrue(hottest.get("reuse_mean_tokens").asDouble() >= 1, hottest.toString());
    }

    /**
     * The MoE figures of a {@code llama-bench -p P -n N -r R} run on the tiny-moe model against the designed
     * router: every token row read (read + unread = ran, none unread), decode and prefill rows exact, k selections
     * per row, each expert's count within the binomial tolerance.
     */
    static void assertRoutingMatchesTheDesign(JsonNode total, int promptTokens, int generatedTokens, int repetitions) {
        assertRoutingMatchesTheDesign(total, promptTokens, generatedTokens, repetitions, true);
    }

    /**
     * {@code positionsRead}: the token layer reads the batches' positions (host memory), so it counts each
     * generation run's first token, at position 0, as a prompt token; where they are on a device only the sum of
     * its counts is llama-bench's.
     */
    static void assertRoutingMatchesTheDesign(JsonNode total, int promptTokens, int generatedTokens, int repetitions,
                                              boolean positionsRead) {
        long prefillCalls = repetitions + 1;
        long decodeSteps = (long) repetitions * generatedTokens + 1;
        long bosTokens = prefillCalls + repetitions + 1;
        // The token layer counts by the one rule (LlamaBenchRun); the MoE rows below go by batch size.
        LlamaBenchRun run = new LlamaBenchRun(promptTokens, generatedTokens, repetitions);
        if (positionsRead) {
            assertEquals(run.promptTokensCounted(), total.get("tokens_prefill").asLong());
            assertEquals(run.generatedTokensCounted(), total.get("tokens_decode").asLong());
        }
        assertEquals(run.promptTokensCounted() + run.generatedTokensCounted(),
                total.get("tokens_prefill").asLong() + total.get("tokens_decode").asLong());
        assertEquals(0, total.get("lost_events").asLong());

        JsonNode moe = total.get("moe");
        assertTrue(moe != null && moe.isObject(), "moe object in the JSON: " + total);
        SyntheticModel spec = SyntheticModel.preset("tiny-moe");
        RouterDesign design = spec.routerDesign();
        double[][] expected = design.expectedExpertFrequencies();
        assertEquals(spec.expertsUsedPerToken(), moe.get("experts_used").asInt());
        assertEquals(spec.expertCount(), moe.get("experts").asInt());
        assertEquals(16384, moe.get("id_bytes_bound").asInt());
        assertEquals(0, moe.get("nodes_truncated").asLong(), "64-token batches fit the bound");
        assertEquals(0, moe.get("read_failures").asLong());
        // This release numbers nodes with the COMPUTE flag: the probes plan each graph while the operator layer
        // walks it, so even the first graph of each shape is read.
        assertEquals(0, moe.get("graphs_without_ids").asLong(), moe.toString());

        int lastLayer = spec.layerCount() - 1;
        for (int layer = 0; layer < spec.layerCount(); layer++) {
            JsonNode l = moe.get("layers").get(Integer.toString(layer));
            long read = l.get("tokens_prefill").asLong() + l.get("tokens_decode").asLong();
            long unread = l.get("tokens_unread").asLong();
            // Every token row the MoE nodes ran is either read or counted unread. The last layer's FFN runs
            // only for tokens whose logits are wanted: one per llama_decode call.
            long ran = layer == lastLayer ? prefillCalls + decodeSteps
                    : prefillCalls * promptTokens + decodeSteps;
            assertEquals(ran, read + unread, "layer " + layer + " token rows: " + l);
            assertEquals(0, unread, "every token row read: " + l);
            assertEquals(decodeSteps, l.get("tokens_decode").asLong(), "decode rows, layer " + layer);
            assertEquals(layer == lastLayer ? prefillCalls : prefillCalls * promptTokens,
                    l.get("tokens_prefill").asLong(), "prefill rows (the last layer's go with their batch), layer " + layer);

            // Each row selects exactly k experts.
            long[] counts = new long[spec.expertCount()];
            long selections = 0;
            for (int e = 0; e < counts.length; e++) {
                counts[e] = l.get("decode").get(e).asLong() + l.get("prefill").get(e).asLong();
                selections += counts[e];
            }
            long rows = l.get("tokens_decode").asLong() + l.get("tokens_prefill").asLong();
            assertEquals(rows * spec.expertsUsedPerToken(), selections, "k selections per row, layer " + layer);
            for (int e = 0; e < counts.length; e++) {
                double f = expected[layer][e];
                double tolerance = SIGMAS * Math.sqrt(rows * f * (1 - f)) + bosTokens;
                System.out.printf("moe layer %d expert %d: measured %d of %d rows (%.3f), designed %.3f, tolerance ±%.1f%n",
                        layer, e, counts[e], rows, (double) counts[e] / rows, f, tolerance);
                assertEquals(rows * f, counts[e], tolerance, "layer " + layer + " expert " + e + " of " + l);
            }
        }
        // Layer 1 is layer 0 rotated by one: its hottest expert is expert 1.
        assertTrue(moe.get("layers").get("1").get("decode").get(1).asLong()
                > moe.get("layers").get("1").get("decode").get(0).asLong(), moe.toString());
    }
}
