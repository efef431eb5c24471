package dev.infertop.json;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema;
import dev.infertop.model.MoeTotals;

/**
 * The MoE layer's part of each JSON line: the object {@code "moe"} (man/infertop.1 documents every field).
 * Counts are over the run in every line, the {@code window_*} arrays over the sliding window.
 */
final class MoeJson {
    private MoeJson() {}

    static void put(ObjectNode root, MoeTotals moe) {
        put(root, moe, java.util.Map.of());
    }

    /** {@code onDevices}: MUL_MAT_ID nodes per backend other than the CPU, over the run. */
    static void put(ObjectNode root, MoeTotals moe, java.util.Map<String, Long> onDevices) {
        if (!moe.active()) {
            return;
        }
        ObjectNode node = root.putObject(JsonSchema.MOE.key());
        node.put(JsonSchema.MoeField.WINDOW_INTERVALS.key(), moe.windowTicks());
        node.put(JsonSchema.MoeField.EXPERTS_USED.key(), moe.expertsUsed());
        node.put(JsonSchema.MoeField.EXPERTS.key(), moe.expertCount());
        node.put(JsonSchema.MoeField.ID_BYTES_BOUND.key(), moe.idBytesBound());
        node.put(JsonSchema.MoeField.NODES_READ.key(), moe.nodesRead());
        node.put(JsonSchema.MoeField.NODES_READ_FROM_HOST_COPIES.key(), moe.nodesReadFromHostCopies());
        ObjectNode devices = node.putObject(JsonSchema.MoeField.NODES_ON_DEVICES.key());
        onDevices.forEach(devices::put);
        node.put(JsonSchema.MoeField.NODES_TRUNCATED.key(), moe.nodesTruncated());
        node.put(JsonSchema.MoeField.ROWS_TRUNCATED.key(), moe.rowsTruncated());
        node.put(JsonSchema.MoeField.GRAPHS_WITHOUT_IDS.key(), moe.graphsWithoutIds());
        node.put(JsonSchema.MoeField.READ_FAILURES.key(), moe.readFailures());
        node.put(JsonSchema.MoeField.ID_BYTES_COPIED.key(), moe.idBytesCopied());
        putDouble(node, JsonSchema.MoeField.IMBALANCE_CV, moe.meanCv(), 4);
        ObjectNode layers = node.putObject(JsonSchema.MoeField.LAYERS.key());
        for (int l = 0; l < moe.layerCount(); l++) {
            ObjectNode layer = layers.putObject(Integer.toString(l));
            layer.put(JsonSchema.MoeLayerField.TOKENS_PREFILL.key(), at(moe.totalRowsPrefill(), l));
            layer.put(JsonSchema.MoeLayerField.TOKENS_DECODE.key(), at(moe.totalRowsDecode(), l));
            layer.put(JsonSchema.MoeLayerField.TOKENS_UNREAD.key(), at(moe.rowsUnreadByLayer(), l));
            putCounts(layer.putArray(JsonSchema.MoeLayerField.PREFILL.key()), moe.totalPrefill(), l);
            putCounts(layer.putArray(JsonSchema.MoeLayerField.DECODE.key()), moe.totalDecode(), l);
            layer.put(JsonSchema.MoeLayerField.WINDOW_TOKENS_PREFILL.key(), at(moe.windowRowsPrefill(), l));
            layer.put(JsonSchema.MoeLayerField.WINDOW_TOKENS_DECODE.key(), at(moe.windowRowsDecode(), l));
            putCounts(layer.putArray(JsonSchema.MoeLayerField.WINDOW_PREFILL.key()), moe.windowPrefill(), l);
            putCounts(layer.putArray(JsonSchema.MoeLayerField.WINDOW_DECODE.key()), moe.windowDecode(), l);
            putDouble(layer, JsonSchema.MoeLayerField.CV, l < moe.cvByLayer().length ? moe.cvByLayer()[l] : Double.NaN, 4);
        }
        ObjectNode experts = node.putObject(JsonSchema.MoeField.PER_EXPERT.key());
        for (MoeTotals.ExpertStats e : moe.experts()) {
            ObjectNode expert = experts.putObject(Integer.toString(e.expert()));
            expert.put(JsonSchema.MoeExpertField.ACTIVE_NODES.key(), e.activeNodes());
            putDouble(expert, JsonSchema.MoeExpertField.NODE_P50_MS, e.nodeP50Ms(), 4);
            putDouble(expert, JsonSchema.MoeExpertField.NODE_P99_MS, e.nodeP99Ms(), 4);
            putDouble(expert, JsonSchema.MoeExpertField.ROW_SHARE_MS, e.rowShareMs(), 4);
            putDouble(expert, JsonSchema.MoeExpertField.REUSE_MEAN_TOKENS, e.meanReuseTokens(), 3);
            expert.put(JsonSchema.MoeExpertField.TOKENS_SINCE_LAST.key(), e.tokensSinceLast());
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

    private static void putDouble(ObjectNode node, JsonSchema.Key field, double value, int decimals) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            node.putNull(field.key());
        } else {
            double scale = Math.pow(10, decimals);
            node.put(field.key(), Math.round(value * scale) / scale);
        }
    }
}
