package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * llama.cpp's Vulkan backend (the npm @node-llama-cpp/linux-x64-vulkan build; provision-vulkan.sh) on lavapipe,
 * Vulkan on the CPU, with the synthetic "tiny" model (2 layers, n_embd 256) offloaded fully and in part. The
 * offload section must tell enqueue time from device-complete time, and its copies must match the graph: every
 * tensor the scheduler copied into Vulkan has the bytes its shape in the model gives, per token or per call,
 * counted against the token layer's own counts (llama_decode's batches), and the ops per backend follow the split.
 */
class VulkanOffloadIT {
    private static final int N_EMBD = 256;   // preset "tiny"
    private static final int LAYERS = 2;
    private static final int F32_BYTES = 4;
    private static Path bench;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() {
        LlamaCppWorkload workload = Requirements.canTraceLlamaCpp();
        Path dir = workload.root().resolve("prebuilt-vulkan");
        bench = dir.resolve("llama-bench");
        Requirements.require(Files.isExecutable(bench) && Files.exists(dir.resolve("libggml-vulkan.so")),
                "needs the Vulkan build of llama.cpp: run src/scripts/provision-vulkan.sh");
        Requirements.require(Files.exists(Path.of("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")),
                "needs lavapipe (software Vulkan): apt-get install -y mesa-vulkan-drivers libvulkan1");
        tinyModel = Models.preset("tiny");
    }

    private static JsonNode trace(int gpuLayers) throws Exception {
        return trace(gpuLayers, List.of(), Map.of());
    }

    private static JsonNode trace(int gpuLayers, List<String> options, Map<String, String> environment)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(options);
        Map<String, String> env = new HashMap<>(environment);
        env.put("LD_LIBRARY_PATH", bench.getParent().toString());
        env.put("GGML_VK_VISIBLE_DEVICES", "0");
        args.addAll(InfertopProcess.env(env));
        args.addAll(List.of("--", bench.toString(), "-m", tinyModel.toString(), "-ngl", Integer.toString(gpuLayers),
                "-p", "16", "-n", "4", "-r", "1", "-t", "2"));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(600), "stderr:\n" + infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertTrue(infertop.stderrText().contains("ggml_vulkan: 0 = "), "no Vulkan device found:\n"
                    + infertop.stderrText());
            assertEquals(0, total.get("lost_events").asLong());
            return total;
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    /** Bytes copied to {@code backend} per tensor name, and each tensor's copies. */
    private static Map<String, long[]> copiesTo(JsonNode total, String backend) {
        Map<String, long[]> copies = new HashMap<>();
        for (JsonNode copy : total.get("offload").get("copies")) {
            if (copy.get("to_backend").asText().equals(backend)) {
                copies.put(copy.get("tensor").asText(),
                        new long[] {copy.get("bytes").asLong(), copy.get("copies").asLong()});
            }
        }
        return copies;
    }

    private static void deviceTimeIsLabelledAndBoundsEnqueue(JsonNode total) {
        deviceTimeIsLabelledAndBoundsEnqueue(total, true);
    }

    /** {@code hostDispatch}: the Vulkan library keeps its symbol table (ggml_vk_submit is probed). */
    static void deviceTimeIsLabelledAndBoundsEnqueue(JsonNode total, boolean hostDispatch) {
        JsonNode vulkan = total.get("offload").get("backends").get("Vulkan");
        assertNotNull(vulkan, total.get("offload").toString());
        assertEquals("device-complete", vulkan.get("completion").asText(), vulkan.toString());
        assertEquals(total.get("graph_computes").get("Vulkan").asLong(), vulkan.get("graphs").asLong());
        assertTrue(vulkan.get("completed_graphs").asLong() > 0, vulkan.toString());
        // A compute's span from its entry to the synchronize that closes it holds the compute call itself.
        assertTrue(vulkan.get("device_complete_ms").asDouble() >= vulkan.get("completed_enqueue_ms").asDouble(),
                vulkan.toString());
        assertTrue(vulkan.get("host_waits").asLong() > 0, vulkan.toString());
        if (!hostDispatch) {
            assertFalse(total.get("offload").get("host_dispatch").has("Vulkan"), total.get("offload").toString());
            // nor its node-by-node recording (a static function): no dispatch figure rather than a zero
            assertFalse(total.get("backends").get("Vulkan").has("dispatch"), total.get("backends").toString());
            return;
        }
        // Host dispatch (ggml_vk_submit): each Vulkan compute hands its recorded nodes to the queue at least once.
        JsonNode dispatch = total.get("offload").get("host_dispatch").get("Vulkan");
        assertNotNull(dispatch, total.get("offload").toString());
        assertTrue(dispatch.get("submits").asLong() >= vulkan.get("graphs").asLong(), dispatch + " " + vulkan);
        JsonNode cpu = total.get("offload").get("backends").get("CPU");
        assertEquals("computes in the call", cpu.get("completion").asText(), cpu.toString());
        assertFalse(cpu.has("device_complete_ms"), cpu.toString());
    }

    /**
     * The per-token figures count the same llama_decode calls as the token layer (llama-bench's batches: one token
     * a generated token, more prompt tokens), and the per-graph figure is the backend's bytes over its graphs.
     */
    private static JsonNode perTokenMatchesTheTokenLayer(JsonNode total) {
        return perTokenMatchesTheTokenLayer(total, true);
    }

    private static JsonNode perTokenMatchesTheTokenLayer(JsonNode total, boolean tokenLayerAgrees) {
        JsonNode perToken = total.get("offload").get("per_token");
        assertNotNull(perToken, total.get("offload").toString());
        JsonNode vulkanBackend = total.get("offload").get("backends").get("Vulkan");
        assertEquals((double) vulkanBackend.get("bytes_in").asLong() / vulkanBackend.get("graphs").asLong(),
                vulkanBackend.get("bytes_in_per_graph").asDouble(), 1e-3, vulkanBackend.toString());
        if (!tokenLayerAgrees) {
            return perToken;
        }
        // Every decoded token is given its call's copies (a release whose batches say which tokens are prompt
        // and which generated splits them per sequence in the token layer, so only the sum is the same there).
        assertEquals(total.get("tokens_prefill").asLong() + total.get("tokens_decode").asLong(),
                perToken.get("prompt_tokens").asLong() + perToken.get("generated_tokens").asLong(), perToken.toString());
        JsonNode vulkan = total.get("offload").get("backends").get("Vulkan");
        assertEquals((double) vulkan.get("bytes_in").asLong() / vulkan.get("graphs").asLong(),
                vulkan.get("bytes_in_per_graph").asDouble(), 1e-3, vulkan.toString());
        return perToken;
    }

    /** Calls of more than one token (prompt) and of one (generated): decode_calls split by the per-token figures. */
    private static long[] promptAndGeneratedCalls(JsonNode total) {
        return promptAndGeneratedCalls(total, total.get("decode_calls").asLong());
    }

    private static long[] promptAndGeneratedCalls(JsonNode total, long calls) {
        long generated = total.get("offload").get("per_token").get("generated_tokens").asLong(); // one a call
        return new long[] {calls - generated, generated};
    }

    @Test
    void fullOffloadCopiesTheInputsByTheirShapeAndKeepsOnlyTheEmbeddingOnTheCpu() throws Exception {
        JsonNode total = trace(99);
        deviceTimeIsLabelledAndBoundsEnqueue(total);
        fullOffloadOracles(total);
        // llama_batch_get_one's batches: the token layer's split is the per-token figures' split.
        assertEquals(total.get("tokens_prefill").asLong(), total.get("offload").get("per_token").get("prompt_tokens")
                .asLong(), total.get("offload").toString());
    }

    /** What -ngl 99 copies and keeps on the CPU, from the model's sizes (also sid's build: VulkanDistroIT). */
    static void fullOffloadOracles(JsonNode total) {
        fullOffloadOracles(total, "embd", Set.of("attn_inp_k_idxs", "attn_inp_v_idxs"), true);
    }

    /**
     * As above, for a release that names the embedding's rows {@code embedding} and copies an int64 per token for
     * each of {@code rowIds} (the KV cache's K and V row indices; newer releases add their input slots);
     * {@code tokenLayerAgrees}: the token layer's token counts are llama_decode's own (else the per-token
     * figures' counts, from the same records, are the oracle's tokens).
     */
    static void fullOffloadOracles(JsonNode total, String embedding, Set<String> rowIds, boolean tokenLayerAgrees) {
        JsonNode counted = total.get("offload").get("per_token");
        long tokens = tokenLayerAgrees ? total.get("tokens_prefill").asLong() + total.get("tokens_decode").asLong()
                : counted.get("prompt_tokens").asLong() + counted.get("generated_tokens").asLong();
        Map<String, long[]> toVulkan = copiesTo(total, "Vulkan0");
        // The output row ids are copied once a call: the calls, where the token layer's are not llama_decode's.
        long calls = tokenLayerAgrees ? total.get("decode_calls").asLong()
                : toVulkan.getOrDefault("out_ids", new long[2])[1];
        assertTrue(tokens > 0 && calls > 0, total.toString());

        String copies = total.get("offload").get("copies").toString();
        // The token embedding's rows (GET_ROWS on the CPU, where token_embd stays): n_embd F32 per token.
        assertNotNull(toVulkan.get(embedding), copies);
        assertEquals((long) N_EMBD * F32_BYTES * tokens, toVulkan.get(embedding)[0], copies);
        // Positions: one int32 per token; the KV cache's row indices: one int64 per token; the output rows
        // (llama-bench asks for the last token's logits only): one int32 per call.
        assertEquals(4L * tokens, toVulkan.get("inp_pos")[0], copies);
        assertEquals(8L * tokens, toVulkan.get("attn_inp_k_idxs")[0], copies);
        assertEquals(4L * calls, toVulkan.get("out_ids")[0], copies);
        long bytesIn = toVulkan.values().stream().mapToLong(c -> c[0]).sum();
        assertEquals(bytesIn, total.get("offload").get("backends").get("Vulkan").get("bytes_in").asLong(), copies);

        // Per token: a call copies, per token, its embedding row, position, K and V cache row indices (int64)
        // and its row of the F16 attention mask (n_kv wide: the mask's first dimension), then one output row id.
        JsonNode perToken = perTokenMatchesTheTokenLayer(total, tokenLayerAgrees);
        long[] promptGenerated = promptAndGeneratedCalls(total, calls);
        long kvCells = maskWidth(total);
        long perTokenBytes = (long) N_EMBD * F32_BYTES + 4 + 8L * rowIds.size() + 2 * kvCells;
        Set<String> inputs = new HashSet<>(rowIds);
        inputs.addAll(Set.of(embedding, "inp_pos", "attn_inp_kq_mask", "out_ids"));
        assertEquals(inputs, toVulkan.keySet(), copies);
        assertEquals(perTokenBytes * perToken.get("prompt_tokens").asLong() + 4L * promptGenerated[0],
                perToken.get("prompt_bytes_in").asLong(), perToken + " " + copies);
        assertEquals((double) perTokenBytes + 4, perToken.get("bytes_in_per_generated_token").asDouble(), 1e-9,
                perToken.toString());
        assertEquals(bytesIn, perToken.get("prompt_bytes_in").asLong() + perToken.get("generated_bytes_in").asLong(),
                "every copy was made in a llama_decode call: " + perToken);

        // What stayed on the CPU: the embedding's GET_ROWS, once per CPU graph, n_embd wide.
        JsonNode stayed = total.get("offload").get("stayed_on_cpu");
        assertTrue(stayed.get("cpu_graphs").asLong() > 0, stayed.toString());
        assertEquals(Set.of("GET_ROWS"), fieldNames(stayed.get("ops_per_graph")), stayed.toString());
        assertEquals(1.0, stayed.get("ops_per_graph").get("GET_ROWS").asDouble(), stayed.toString());
        JsonNode getRows = stayed.get("nodes").get(0);
        assertEquals("GET_ROWS", getRows.get("op").asText(), stayed.toString());
        assertTrue(getRows.get("shape").asText().startsWith(N_EMBD + "x"), stayed.toString());

        // The op mix: every computing op of the CPU backend is the embedding's GET_ROWS; Vulkan runs the
        // layers' and the output's matmuls (7 a layer, 1 for the output) and the attention.
        Set<String> views = Set.of("NONE", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE");
        JsonNode cpuOps = total.get("backends").get("CPU").get("ops");
        cpuOps.fieldNames().forEachRemaining(op -> assertTrue(op.equals("GET_ROWS") || views.contains(op),
                "the CPU ran " + op + ": " + cpuOps));
        JsonNode vulkanOps = total.get("backends").get("Vulkan").get("ops");
        assertTrue(vulkanOps.has("FLASH_ATTN_EXT") && vulkanOps.has("ROPE"), vulkanOps.toString());
        long vulkanGraphsCounted = vulkanOps.get("MUL_MAT").get("nodes").asLong() / (7L * LAYERS + 1);
        assertEquals(vulkanOps.get("MUL_MAT").get("nodes").asLong(), vulkanGraphsCounted * (7L * LAYERS + 1),
                "MUL_MAT nodes are 15 per Vulkan graph: " + vulkanOps);
    }

    /**
     * The host's node-by-node dispatch (ggml_vk_build_graph, called per node the backend records): every node of
     * every Vulkan graph is either called for or computed by an earlier node's fused dispatch, op by op, against
     * the graph's own node counts. With ggml-vulkan's fusion switched off (GGML_VK_DISABLE_FUSION) no node is
     * fused and each op's calls are its nodes.
     */
    @Test
    void fullOffloadDispatchCountsEveryNodeFusedOrNot() throws Exception {
        JsonNode fusing = trace(99, List.of("--budget", "0"), Map.of());
        long fusedNodes = dispatchAccountsForEveryNode(fusing);
        assertTrue(fusedNodes > 0, "ggml-vulkan fuses on lavapipe: " + fusing.get("backends").get("Vulkan"));
        JsonNode unfused = trace(99, List.of("--budget", "0"), Map.of("GGML_VK_DISABLE_FUSION", "1"));
        assertEquals(0, dispatchAccountsForEveryNode(unfused), unfused.get("backends").get("Vulkan").toString());
        JsonNode fusingDispatch = fusing.get("backends").get("Vulkan").get("dispatch");
        JsonNode unfusedDispatch = unfused.get("backends").get("Vulkan").get("dispatch");
        // The same graphs: fusion turns each fused computing node's own dispatch into none (a fused view had none).
        long fusedViews = 0;
        for (String view : List.of("NONE", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE")) {
            fusedViews += fusingDispatch.get("ops").path(view).path("fused").asLong();
        }
        assertEquals(perGraph(unfusedDispatch, "dispatches"), perGraph(fusingDispatch, "dispatches")
                + (fusingDispatch.get("fused_nodes").asDouble() - fusedViews) / fusingDispatch.get("graphs").asLong(),
                1e-9, fusingDispatch + " " + unfusedDispatch);
    }

    /**
     * MoE with its experts' weights left in host memory and the rest on Vulkan (-ngl 99 -ot exps=CPU, as users run
     * a large MoE model on a small GPU): a decode step's experts compute on the CPU, whose MUL_MAT_ID the layer
     * reads as before; a prompt batch's are offloaded by the scheduler, which reads their ids back to the host to
     * copy only the experts used: read there. Together every token row of every layer is read, and the routing
     * matches the designed router, as on the CPU (MoeExpertIT).
     */
    @Test
    void moeWithTheExpertsInHostMemoryReadsEveryTokenRowOnBothPaths() throws Exception {
        Path moeModel = Models.preset("tiny-moe");
        int prompt = 64, generated = 32, repetitions = 2;
        JsonNode total = traceMoe(moeModel, "-ngl", "99", "-ot", "exps=CPU", "-p", Integer.toString(prompt),
                "-n", Integer.toString(generated), "-r", Integer.toString(repetitions));
        assertTrue(total.get("graph_computes").has("Vulkan"), total.get("graph_computes").toString());
        JsonNode moe = total.get("moe");
        // one host copy per MoE layer below the last per prompt call (the last layer's one row stays on the CPU)
        long layersBelowLast = moe.get("layers").size() - 1;
        assertEquals((repetitions + 1) * layersBelowLast, moe.get("nodes_read_from_host_copies").asLong(),
                moe.toString());
        // the positions are on Vulkan: the token layer's split of the tokens is by batch size only
        MoeExpertIT.assertRoutingMatchesTheDesign(total, prompt, generated, repetitions, false);
        // the offloaded batches' expert matmuls (gate, up, down) are said to have run on Vulkan
        assertEquals(3 * (repetitions + 1) * layersBelowLast, moe.get("nodes_on_devices").get("Vulkan").asLong(),
                moe.toString());
    }

    /**
     * With the experts' weights on Vulkan too (-ngl 99), their ids never come back to the host: nothing is read,
     * and the MoE figures say how many expert matmuls ran there instead of showing an empty heatmap as the truth.
     */
    @Test
    void moeFullyOffloadedSaysItsExpertMatmulsRanOnTheDevice() throws Exception {
        JsonNode total = traceMoe(Models.preset("tiny-moe"), "-ngl", "99", "-p", "16", "-n", "4", "-r", "1");
        JsonNode moe = total.get("moe");
        assertEquals(0, moe.get("nodes_read").asLong(), moe.toString());
        long vulkanGraphs = total.get("graph_computes").get("Vulkan").asLong();
        // 2 MoE layers, gate, up and down each, in every Vulkan graph
        assertEquals(2 * 3 * vulkanGraphs, moe.get("nodes_on_devices").get("Vulkan").asLong(), moe.toString());
    }

    /** The MoE layer on, every graph traced, over the Vulkan llama-bench on {@code model} with {@code benchArgs}. */
    private static JsonNode traceMoe(Path model, String... benchArgs) throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--layers", "token,graph,moe",
                "--budget", "0"));
        args.addAll(InfertopProcess.env(Map.of("LD_LIBRARY_PATH", bench.getParent().toString(),
                "GGML_VK_VISIBLE_DEVICES", "0")));
        args.addAll(List.of("--", bench.toString(), "-m", model.toString(), "-t", "2"));
        args.addAll(List.of(benchArgs));
        try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
            assertEquals(0, infertop.waitFor(600), "stderr:\n" + infertop.stderrText());
            return infertop.finalObject();
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    /** Checks the dispatch figures against the graph's op counts; returns the nodes fused. */
    private static long dispatchAccountsForEveryNode(JsonNode total) {
        JsonNode vulkan = total.get("backends").get("Vulkan");
        JsonNode dispatch = vulkan.get("dispatch");
        assertNotNull(dispatch, "the Vulkan build keeps ggml_vk_build_graph: " + vulkan);
        // --budget 0: every graph is followed, from its first node to its return
        assertEquals(vulkan.get("graphs").asLong(), dispatch.get("graphs").asLong(), vulkan.toString());
        JsonNode ops = vulkan.get("ops");
        ops.fieldNames().forEachRemaining(op -> {
            JsonNode d = dispatch.get("ops").get(op);
            assertNotNull(d, op + " has nodes but no dispatch figure: " + vulkan);
            assertEquals(ops.get(op).get("nodes").asLong(), d.get("calls").asLong() + d.get("fused").asLong(),
                    op + ": calls + fused = nodes: " + vulkan);
        });
        assertEquals(ops.size(), dispatch.get("ops").size(), vulkan.toString());
        assertEquals(vulkan.get("nodes").asLong(), dispatch.get("calls").asLong()
                + dispatch.get("fused_nodes").asLong(), vulkan.toString());
        assertTrue(dispatch.get("dispatches").asLong() > 0
                && dispatch.get("dispatches").asLong() < dispatch.get("calls").asLong(),
                "views are called for and dispatch nothing: " + dispatch);
        return dispatch.get("fused_nodes").asLong();
    }

    private static double perGraph(JsonNode dispatch, String field) {
        return dispatch.get(field).asDouble() / dispatch.get("graphs").asLong();
    }

    @Test
    void partialOffloadCopiesTheLastLayersRowsAndKeepsAttentionOnTheCpu() throws Exception {
        // -ngl 1: only the output layer on Vulkan. Its split starts at the last layer's FFN residual add, whose
        // two inputs cross over: one row each (the last layer keeps only the rows of the logits asked for).
        JsonNode total = trace(1);
        deviceTimeIsLabelledAndBoundsEnqueue(total);
        partialOffloadOracles(total);
    }

    /** What -ngl 1 copies and keeps on the CPU, from the model's sizes (also sid's build: VulkanDistroIT). */
    static void partialOffloadOracles(JsonNode total) {
        long calls = total.get("decode_calls").asLong();
        Map<String, long[]> toVulkan = copiesTo(total, "Vulkan0");
        String copies = total.get("offload").get("copies").toString();
        String last = Integer.toString(LAYERS - 1);
        assertEquals(Set.of("ffn_inp-" + last, "ffn_out-" + last), toVulkan.keySet(), copies);
        for (long[] copy : toVulkan.values()) {
            assertEquals((long) N_EMBD * F32_BYTES * calls, copy[0], copies);
            assertEquals(calls, copy[1], copies);
        }
        // Per token: each call copies those two rows whatever its tokens: a generated token costs 2 rows, a
        // prompt call 2 rows over its tokens.
        JsonNode perToken = perTokenMatchesTheTokenLayer(total);
        long[] promptGenerated = promptAndGeneratedCalls(total);
        long twoRows = 2L * N_EMBD * F32_BYTES;
        assertEquals(twoRows * promptGenerated[0], perToken.get("prompt_bytes_in").asLong(), perToken.toString());
        assertEquals((double) twoRows, perToken.get("bytes_in_per_generated_token").asDouble(), 1e-9,
                perToken.toString());
        assertEquals((double) twoRows, total.get("offload").get("backends").get("Vulkan").get("bytes_in_per_graph")
                .asDouble(), 1e-9, "one Vulkan graph per call, two rows each");

        // What stayed on the CPU: both layers, so per CPU graph their 7 matmuls each and one attention each.
        JsonNode stayed = total.get("offload").get("stayed_on_cpu");
        JsonNode opsPerGraph = stayed.get("ops_per_graph");
        assertEquals(7.0 * LAYERS, opsPerGraph.get("MUL_MAT").asDouble(), stayed.toString());
        assertEquals((double) LAYERS, opsPerGraph.get("FLASH_ATTN_EXT").asDouble(), stayed.toString());
        assertEquals(0, stayed.get("nodes_folded").asLong(), stayed.toString());
        Set<String> vulkanOps = new HashSet<>();
        total.get("backends").get("Vulkan").get("ops").fieldNames().forEachRemaining(vulkanOps::add);
        Set<String> allowed = Set.of("ADD", "RMS_NORM", "MUL", "MUL_MAT", "NONE", "RESHAPE", "VIEW", "PERMUTE",
                "TRANSPOSE");
        assertTrue(allowed.containsAll(vulkanOps), "Vulkan ran " + vulkanOps);
        JsonNode cpuOps = total.get("backends").get("CPU").get("ops");
        assertTrue(cpuOps.has("FLASH_ATTN_EXT") && cpuOps.has("ROPE") && cpuOps.has("MUL_MAT"), cpuOps.toString());
    }

    /** The KV cells the attention mask spans (its ne0, as recorded for its first copy). */
    private static long maskWidth(JsonNode total) {
        for (JsonNode copy : total.get("offload").get("copies")) {
            if (copy.get("tensor").asText().equals("attn_inp_kq_mask")) {
                return Long.parseLong(copy.get("shape").asText().split("x")[0]);
            }
        }
        throw new AssertionError("no mask copied: " + total.get("offload").get("copies"));
    }

    private static Set<String> fieldNames(JsonNode object) {
        Set<String> names = new HashSet<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
