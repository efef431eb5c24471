package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A second Vulkan build nobody here compiled: Debian sid's libggml0-backend-vulkan (stripped, dlopen'ed from
 * the backends directory) with sid's own lavapipe, in a root of their own (provision-distro-llama.sh's Vulkan
 * root) started as a container. sid's llama-bench, offloaded fully and in part, must give the offload section
 * the same exact figures as the npm build (VulkanOffloadIT's oracles from the model's sizes). The stripped
 * library keeps no ggml_vk_submit: host dispatch is absent, never a zero.
 */
class VulkanDistroIT {
    private static final String BACKEND = "/usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-vulkan.so";
    private static Path root;
    private static Path tinyModel;
    private final List<Process> containers = new ArrayList<>();

    @BeforeAll
    static void requirements() {
        Requirements.canTrace();
        Path dir = Containers.debianRoot().getParent();
        Requirements.require(Files.exists(dir.resolve("vulkan-root.stamp")),
                "needs Debian sid's Vulkan backend and lavapipe in a root of their own: run "
                        + "src/scripts/provision-distro-llama.sh (setup.sh does)");
        root = dir.resolve("vulkan-root");
        tinyModel = Models.preset("tiny");
    }

    @AfterEach
    void stopContainers() throws Exception {
        for (Process container : containers) {
            Containers.stop(container);
        }
        LeakCheck.assertNothingLeft();
    }

    /** sid's llama-bench with {@code gpuLayers} on lavapipe, stopped before its first call while infertop attaches. */
    private JsonNode traceBench(int gpuLayers) throws Exception {
        Process container = Containers.start(root, tinyModel.getParent(), List.of("--env",
                "GGML_VK_VISIBLE_DEVICES=0"), "/usr/bin/llama-bench", "-m", "/models/" + tinyModel.getFileName(),
                "-ngl", Integer.toString(gpuLayers), "-p", "16", "-n", "4", "-r", "1", "-t", "2");
        containers.add(container);
        // The backends are loaded before the model: once the model is mapped, the Vulkan backend is too.
        long pid = Containers.awaitTool(container, "llama-bench", 120, List.of("/libllama.so", BACKEND),
                List.of(tinyModel.getFileName().toString()));
        Containers.signal(pid, Containers.SIGSTOP);
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-p", Long.toString(pid))) {
            infertop.awaitStderr("probes attached", 180);
            Containers.signal(pid, Containers.SIGCONT);
            assertTrue(container.waitFor(300, TimeUnit.SECONDS), "llama-bench finished in its container");
            assertEquals(0, container.exitValue(), "llama-bench's exit status");
            assertEquals(0, infertop.waitFor(60), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals(0, total.get("lost_events").asLong());
            assertTrue(total.get("offload").get("backends").has("Vulkan"),
                    "no Vulkan graph seen (lavapipe not found in the root?): " + total.get("offload"));
            return total;
        }
    }

    @Test
    void sidsVulkanBuildFullyOffloadedCopiesWhatTheModelsSizesSay() throws Exception {
        JsonNode total = traceBench(99);
        VulkanOffloadIT.deviceTimeIsLabelledAndBoundsEnqueue(total, false);
        // This release feeds token ids and embeddings through one input (inp_mixed_embd) and copies each
        // token's input slot (inp_mixed_slots, int64) too. Its token layer (llama_process, per-sequence
        // accounting) does not count every call's tokens as llama_decode's records give them: the per-token
        // figures' own counts, from the same records, are the tokens here.
        VulkanOffloadIT.fullOffloadOracles(total, "inp_mixed_embd",
                java.util.Set.of("attn_inp_k_idxs", "attn_inp_v_idxs", "inp_mixed_slots"), false);
    }

    @Test
    void sidsVulkanBuildPartlyOffloadedCopiesTheLastLayersRows() throws Exception {
        JsonNode total = traceBench(1);
        VulkanOffloadIT.deviceTimeIsLabelledAndBoundsEnqueue(total, false);
        // The CPU computes both layers, Vulkan the output: as with the npm build, per CPU graph.
        JsonNode stayed = total.get("offload").get("stayed_on_cpu");
        assertEquals(14.0, stayed.get("ops_per_graph").get("MUL_MAT").asDouble(), stayed.toString());
        assertEquals(2.0, stayed.get("ops_per_graph").get("FLASH_ATTN_EXT").asDouble(), stayed.toString());
        // This release copies the split's inputs by a path not probed here (the Vulkan backend's own static
        // cpy_tensor_async has no symbol in a stripped library): none is seen, and that is said, never a 0.
        JsonNode vulkan = total.get("offload").get("backends").get("Vulkan");
        assertEquals(0, vulkan.get("copies_in").asLong(), vulkan.toString());
        assertTrue(vulkan.get("copies_unseen").asBoolean(), vulkan.toString());
        assertTrue(!vulkan.has("bytes_in_per_graph"), vulkan.toString());
        JsonNode perToken = total.get("offload").get("per_token");
        assertEquals("[\"Vulkan\"]", perToken.get("copies_unseen_into").toString(), perToken.toString());
        assertTrue(!perToken.has("bytes_in_per_prompt_token") && !perToken.has("bytes_in_per_generated_token"),
                perToken.toString());
    }
}
