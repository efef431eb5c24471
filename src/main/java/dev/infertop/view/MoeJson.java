package dev.infertop.view;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.MoeTotals;

/**
 * The MoE layer's part of each JSON line: the object {@code "moe"} (man/infertop.1 documents every field).
 * Counts are over the run in every line, the {@code window_*} arrays over the sliding window.
 */
final class MoeJson {
    private MoeJson() {}

    static void put(ObjectNode root, MoeTotals moe) {
        if (!moe.active()) {
            return;
        }
        ObjectNode node = root.putObject(JsonSchema.MOE.key());
        node.put("window_intervals", moe.windowTicks());
        node.put("experts_used", moe.expertsUsed());
        node.put("experts", moe.expertCount());
        node.put("id_bytes_bound", moe.idBytesBound());
        node.put("nodes_read", moe.nodesRead());
        node.put("nodes_truncated", moe.nodesTruncated());
        node.put("rows_truncated", moe.rowsTruncated());
        node.put("graphs_without_ids", moe.graphsWithoutIds());
        node.put("read_failures", moe.readFailures());
        node.put("id_bytes_copied", moe.idBytesCopied());
        putDouble(node, "imbalance_cv", moe.meanCv(), 4);
        ObjectNode layers = node.putObject("layers");
        for (int l = 0; l < moe.layerCount(); l++) {
            ObjectNode layer = layers.putObject(Integer.toString(l));
            layer.put("tokens_prefill", at(moe.totalRowsPrefill(), l));
            layer.put("tokens_decode", at(moe.totalRowsDecode(), l));
            layer.put("tokens_unread", at(moe.rowsUnreadByLayer(), l));
            putCounts(layer.putArray("prefill"), moe.totalPrefill(), l);
            putCounts(layer.putArray("decode"), moe.totalDecode(), l);
            layer.put("window_tokens_prefill", at(moe.windowRowsPrefill(), l));
            layer.put("window_tokens_decode", at(moe.windowRowsDecode(), l));
            putCounts(layer.putArray("window_prefill"), moe.windowPrefill(), l);
            putCounts(layer.putArray("window_decode"), moe.windowDecode(), l);
            putDouble(layer, "cv", l < moe.cvByLayer().length ? moe.cvByLayer()[l] : Double.NaN, 4);
        }
        ObjectNode experts = node.putObject("per_expert");
        for (MoeTotals.ExpertStats e : moe.experts()) {
            ObjectNode expert = experts.putObject(Integer.toString(e.expert()));
            expert.put("active_nodes", e.activeNodes());
            putDouble(expert, "node_p50_ms", e.nodeP50Ms(), 4);
            putDouble(expert, "node_p99_ms", e.nodeP99Ms(), 4);
            putDouble(expert, "row_share_ms", e.rowShareMs(), 4);
            putDouble(expert, "reuse_mean_tokens", e.meanReuseTokens(), 3);
            expert.put("tokens_since_last", e.tokensSinceLast());
        }
    }

    private static long at(long[] values, int i) {
        return i < values.length ? values[i] : 0;
    }

    private static void putCounts(ArrayNode array, long[][] counts, int layer) {
        if (layer < counts.length) {
            for (long c : counts[layer]) {
                array.add(c);
            }
        }
    }

    private static void putDouble(ObjectNode node, String field, double value, int decimals) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            node.putNull(field);
        } else {
            double scale = Math.pow(10, decimals);
            node.put(field, Math.round(value * scale) / scale);
        }
    }
}
