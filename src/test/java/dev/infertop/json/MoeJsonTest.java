package dev.infertop.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.MoeTotals;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MoeJsonTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Test
    void everyDocumentedFieldWithExactValues() {
        ObjectNode root = MAPPER.createObjectNode();
        MoeJson.put(root, MoePanelTest.moe());
        JsonNode moe = root.get("moe");
        assertEquals(10, moe.get("window_intervals").asInt());
        assertEquals(2, moe.get("experts_used").asInt());
        assertEquals(4, moe.get("experts").asInt());
        assertEquals(16384, moe.get("id_bytes_bound").asInt());
        assertEquals(12, moe.get("nodes_read").asLong());
        assertEquals(1, moe.get("nodes_truncated").asLong());
        assertEquals(88, moe.get("rows_truncated").asLong());
        assertEquals(3, moe.get("graphs_without_ids").asLong());
        assertEquals(0, moe.get("read_failures").asLong());
        assertEquals(4096, moe.get("id_bytes_copied").asLong());
        assertEquals(0.625, moe.get("imbalance_cv").asDouble(), 1e-12); // (0.5 + 0.75) / 2
        JsonNode layer1 = moe.get("layers").get("1");
        assertEquals("[1,8,0,7]", layer1.get("decode").toString());
        assertEquals("[0,0,0,0]", layer1.get("prefill").toString());
        assertEquals(8, layer1.get("tokens_decode").asLong());
        assertEquals(0, layer1.get("tokens_prefill").asLong());
        assertEquals(5, layer1.get("tokens_unread").asLong());
        assertEquals("[1,8,0,7]", layer1.get("window_decode").toString());
        assertEquals(8, layer1.get("window_tokens_decode").asLong());
        assertEquals(0.75, layer1.get("cv").asDouble(), 1e-12);
        JsonNode expert2 = moe.get("per_expert").get("2");
        assertEquals(5, expert2.get("active_nodes").asLong());
        assertEquals(0.12, expert2.get("node_p50_ms").asDouble(), 1e-12);
        assertEquals(0.4, expert2.get("node_p99_ms").asDouble(), 1e-12);
        assertEquals(2.5, expert2.get("row_share_ms").asDouble(), 1e-12);
        assertTrue(expert2.get("reuse_mean_tokens").isNull(), "undefined figures are null");
        assertEquals(7, expert2.get("tokens_since_last").asLong());
        assertEquals(-1, moe.get("per_expert").get("3").get("tokens_since_last").asLong());
    }

    @Test
    void leftOutWhenTheLayerNeverRan() {
        ObjectNode root = MAPPER.createObjectNode();
        MoeJson.put(root, MoeTotals.EMPTY);
        assertFalse(root.has("moe"));
    }
}
