package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema;
import dev.infertop.model.MoeMath;
import dev.infertop.model.MoeTotals;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A snapshot's MoE figures, from summary.json's {@code moe} object (the --json output's, see infertop(1)):
 * back into the {@link MoeTotals} the replayed MoE panel draws, and the report's "across experts" view: per
 * layer the imbalance (CV, as the summary has it), the hottest and coldest expert, and each expert's tokens
 * over the run (prefill + decode) with its share of the layer's selections.
 */
final class MoeSummary {
    private MoeSummary() {}

    /** llama.cpp's LLAMA_MAX_EXPERTS (as MoeAggregator): no model has more experts per layer. */
    static final int MAX_EXPERTS = 1024;
    /** MoE layers read from a summary: far above any model's block count. */
    static final int MAX_LAYERS = 4096;

    /**
     * Refuses a summary whose MoE section would make {@link #totals} allocate without bound: an expert count
     * or a per-layer array beyond {@link #MAX_EXPERTS}, more layers than {@link #MAX_LAYERS}.
     */
    static void check(java.nio.file.Path file, JsonNode summary) throws SnapshotReadException {
        JsonNode moe = summary.path(JsonSchema.MOE.key());
        if (!moe.isObject()) {
            return;
        }
        long experts = moe.path(JsonSchema.MoeField.EXPERTS.key()).asLong();
        if (experts < 0 || experts > MAX_EXPERTS) {
            throw new SnapshotReadException(file + ": moe.experts is " + moe.path(JsonSchema.MoeField.EXPERTS.key()).asText()
                    + " (at most " + MAX_EXPERTS + ")");
        }
        JsonNode layers = moe.path(JsonSchema.MoeField.LAYERS.key());
        if (layers.size() > MAX_LAYERS) {
            throw new SnapshotReadException(file + ": " + layers.size() + " MoE layers (at most " + MAX_LAYERS + ")");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = layers.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> layer = it.next();
            for (String counts : List.of("window_prefill", "window_decode", "prefill", "decode")) {
                if (layer.getValue().path(counts).size() > MAX_EXPERTS) {
                    throw new SnapshotReadException(file + ": MoE layer " + layer.getKey() + " has "
                            + layer.getValue().path(counts).size() + " " + counts + " counts (at most "
                            + MAX_EXPERTS + " experts)");
                }
            }
        }
    }

    /** The summary's MoE figures; {@link MoeTotals#EMPTY} when it has none (the layer never ran). */
    static MoeTotals totals(JsonNode summary) {
        JsonNode moe = summary.path(JsonSchema.MOE.key());
        if (!moe.isObject()) {
            return MoeTotals.EMPTY;
        }
        List<JsonNode> layers = new ArrayList<>();
        for (int l = 0; l < MAX_LAYERS && moe.path(JsonSchema.MoeField.LAYERS.key()).has(Integer.toString(l)); l++) {
            layers.add(moe.path(JsonSchema.MoeField.LAYERS.key()).path(Integer.toString(l)));
        }
        int n = layers.size();
        long[][] windowPrefill = new long[n][];
        long[][] windowDecode = new long[n][];
        long[][] totalPrefill = new long[n][];
        long[][] totalDecode = new long[n][];
        long[] windowRowsPrefill = new long[n];
        long[] windowRowsDecode = new long[n];
        long[] totalRowsPrefill = new long[n];
        long[] totalRowsDecode = new long[n];
        long[] unread = new long[n];
        double[] cv = new double[n];
        int experts = moe.path(JsonSchema.MoeField.EXPERTS.key()).asInt();
        for (int l = 0; l < n; l++) {
            JsonNode layer = layers.get(l);
            windowPrefill[l] = counts(layer.path(JsonSchema.MoeLayerField.WINDOW_PREFILL.key()), experts);
            windowDecode[l] = counts(layer.path(JsonSchema.MoeLayerField.WINDOW_DECODE.key()), experts);
            totalPrefill[l] = counts(layer.path(JsonSchema.MoeLayerField.PREFILL.key()), experts);
            totalDecode[l] = counts(layer.path(JsonSchema.MoeLayerField.DECODE.key()), experts);
            windowRowsPrefill[l] = layer.path(JsonSchema.MoeLayerField.WINDOW_TOKENS_PREFILL.key()).asLong();
            windowRowsDecode[l] = layer.path(JsonSchema.MoeLayerField.WINDOW_TOKENS_DECODE.key()).asLong();
            totalRowsPrefill[l] = layer.path(JsonSchema.MoeLayerField.TOKENS_PREFILL.key()).asLong();
            totalRowsDecode[l] = layer.path(JsonSchema.MoeLayerField.TOKENS_DECODE.key()).asLong();
            unread[l] = layer.path(JsonSchema.MoeLayerField.TOKENS_UNREAD.key()).asLong();
            cv[l] = number(layer.path(JsonSchema.MoeLayerField.CV.key()));
        }
        List<MoeTotals.ExpertStats> stats = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = moe.path(JsonSchema.MoeField.PER_EXPERT.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode e = entry.getValue();
            OptionalInt expert = NumberKeys.of(entry.getKey());
            if (expert.isEmpty()) {
                continue;
            }
            stats.add(new MoeTotals.ExpertStats(expert.getAsInt(), e.path(JsonSchema.MoeExpertField.ACTIVE_NODES.key()).asLong(),
                    number(e.path(JsonSchema.MoeExpertField.NODE_P50_MS.key())), number(e.path(JsonSchema.MoeExpertField.NODE_P99_MS.key())), number(e.path(JsonSchema.MoeExpertField.ROW_SHARE_MS.key())),
                    number(e.path(JsonSchema.MoeExpertField.REUSE_MEAN_TOKENS.key())), e.path(JsonSchema.MoeExpertField.TOKENS_SINCE_LAST.key()).asLong(-1)));
        }
        return new MoeTotals(true, moe.path(JsonSchema.MoeField.WINDOW_INTERVALS.key()).asInt(), moe.path(JsonSchema.MoeField.EXPERTS_USED.key()).asInt(),
                windowPrefill, windowDecode, windowRowsPrefill, windowRowsDecode, totalPrefill, totalDecode,
                totalRowsPrefill, totalRowsDecode, unread, stats, cv, moe.path(JsonSchema.MoeField.ID_BYTES_BOUND.key()).asInt(),
                moe.path(JsonSchema.MoeField.NODES_READ.key()).asLong(), moe.path(JsonSchema.MoeField.NODES_TRUNCATED.key()).asLong(),
                moe.path(JsonSchema.MoeField.ROWS_TRUNCATED.key()).asLong(), moe.path(JsonSchema.MoeField.GRAPHS_WITHOUT_IDS.key()).asLong(),
                moe.path(JsonSchema.MoeField.READ_FAILURES.key()).asLong(), moe.path(JsonSchema.MoeField.ID_BYTES_COPIED.key()).asLong(), moe.path(JsonSchema.MoeField.NODES_READ_FROM_HOST_COPIES.key()).asLong());
    }

    private static long[] counts(JsonNode array, int experts) {
        // Clamped as well as checked (see check): this allocation is the one a crafted count would inflate.
        int length = Math.clamp(Math.max(experts, array.size()), 0, MAX_EXPERTS);
        long[] counts = new long[length];
        for (int e = 0; e < Math.min(array.size(), length); e++) {
            counts[e] = array.get(e).asLong();
        }
        return counts;
    }

    /** A JSON number, or NaN for null (the summary writes undefined figures as null). */
    private static double number(JsonNode node) {
        return node.isNumber() ? node.asDouble() : Double.NaN;
    }

    /** The report's {@code experts} object. */
    static void put(ObjectNode root, JsonNode summary) {
        ObjectNode node = root.putObject("experts");
        JsonNode status = summary.path(JsonSchema.LAYERS.key()).path(JsonSchema.MOE.key());
        String state = status.path(JsonSchema.LayerField.STATE.key()).asText("off");
        MoeTotals moe = totals(summary);
        if (!moe.active()) {
            node.put("recorded", false);
            String reason = status.path(JsonSchema.LayerField.REASON.key()).asText("");
            node.put("reason", state.equals("off") || reason.isEmpty()
                    ? DeepLayerReport.NOT_RECORDED + " (moe layer " + state + ")" : reason);
            return;
        }
        node.put("recorded", true);
        node.put(JsonSchema.MoeField.EXPERTS.key(), moe.expertCount());
        node.put(JsonSchema.MoeField.EXPERTS_USED.key(), moe.expertsUsed());
        node.set(JsonSchema.MoeField.IMBALANCE_CV.key(), summary.path(JsonSchema.MOE.key()).path(JsonSchema.MoeField.IMBALANCE_CV.key()).deepCopy()); // the summary's, unrounded
        ObjectNode layers = node.putObject(JsonSchema.MoeField.LAYERS.key());
        for (int l = 0; l < moe.layerCount(); l++) {
            long[] counts = moe.runCounts(l);
            long selections = 0;
            for (long c : counts) {
                selections += c;
            }
            ObjectNode layer = layers.putObject(Integer.toString(l));
            layer.put("tokens", at(moe.totalRowsPrefill(), l) + at(moe.totalRowsDecode(), l));
            layer.put("selections", selections);
            putDouble(layer, "cv", l < moe.cvByLayer().length ? moe.cvByLayer()[l] : Double.NaN);
            putDouble(layer, "cv_run", MoeMath.coefficientOfVariation(counts));
            int hottest = -1;
            int coldest = -1;
            for (int e = 0; e < counts.length; e++) {
                if (hottest < 0 || counts[e] > counts[hottest]) {
                    hottest = e;
                }
                if (coldest < 0 || counts[e] < counts[coldest]) {
                    coldest = e;
                }
            }
            layer.put("hottest_expert", hottest);
            layer.put("coldest_expert", coldest);
            ArrayNode tokens = layer.putArray("counts");
            ArrayNode shares = layer.putArray("shares");
            for (long c : counts) {
                tokens.add(c);
                shares.add(selections == 0 ? 0 : round((double) c / selections, 4));
            }
        }
        ObjectNode perExpert = node.putObject(JsonSchema.MoeField.PER_EXPERT.key());
        for (MoeTotals.ExpertStats e : moe.experts()) {
            ObjectNode expert = perExpert.putObject(Integer.toString(e.expert()));
            expert.put(JsonSchema.MoeExpertField.ACTIVE_NODES.key(), e.activeNodes());
            putDouble(expert, "node_p50_ms", e.nodeP50Ms());
            putDouble(expert, "node_p99_ms", e.nodeP99Ms());
            putDouble(expert, "row_share_ms", e.rowShareMs());
        }
    }

    static void print(JsonNode report, PrintStream out) {
        JsonNode experts = report.path("experts");
        out.println();
        out.println("Across experts (tokens per expert over the run, prefill + decode)");
        if (!experts.path("recorded").asBoolean()) {
            out.println("  " + experts.path("reason").asText(DeepLayerReport.NOT_RECORDED));
            return;
        }
        out.printf(Locale.ROOT, "  %d experts, %d per token, mean imbalance CV %s%n", experts.path(JsonSchema.MoeField.EXPERTS.key()).asInt(),
                experts.path(JsonSchema.MoeField.EXPERTS_USED.key()).asInt(), text(experts.path(JsonSchema.MoeField.IMBALANCE_CV.key())));
        out.printf(Locale.ROOT, "  %-5s %9s %6s %7s %7s %7s  %s%n", "LAYER", "TOKENS", "CV", "CV RUN", "HOTTEST",
                "COLDEST", "TOKENS (SHARE) PER EXPERT");
        for (Iterator<Map.Entry<String, JsonNode>> it = experts.path(JsonSchema.MoeField.LAYERS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode layer = entry.getValue();
            StringBuilder perExpert = new StringBuilder();
            for (int e = 0; e < layer.path("counts").size(); e++) {
                perExpert.append(String.format(Locale.ROOT, "%s%d:%d (%.1f%%)", e == 0 ? "" : " ", e,
                        layer.path("counts").get(e).asLong(), 100 * layer.path("shares").get(e).asDouble()));
            }
            out.printf(Locale.ROOT, "  %-5s %9d %6s %7s %7d %7d  %s%n", entry.getKey(), layer.path("tokens").asLong(),
                    text(layer.path(JsonSchema.MoeLayerField.CV.key())), text(layer.path("cv_run")), layer.path("hottest_expert").asInt(),
                    layer.path("coldest_expert").asInt(), perExpert);
        }
        out.printf(Locale.ROOT, "  %-6s %12s %11s %11s %13s%n", "EXPERT", "ACTIVE NODES", "NODE p50 ms", "NODE p99 ms",
                "ROW SHARE ms");
        for (Iterator<Map.Entry<String, JsonNode>> it = experts.path(JsonSchema.MoeField.PER_EXPERT.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode e = entry.getValue();
            out.printf(Locale.ROOT, "  %-6s %12d %11s %11s %13s%n", entry.getKey(), e.path(JsonSchema.MoeExpertField.ACTIVE_NODES.key()).asLong(),
                    text(e.path(JsonSchema.MoeExpertField.NODE_P50_MS.key())), text(e.path(JsonSchema.MoeExpertField.NODE_P99_MS.key())), text(e.path(JsonSchema.MoeExpertField.ROW_SHARE_MS.key())));
        }
    }

    private static String text(JsonNode value) {
        return value.isNumber() ? String.format(Locale.ROOT, "%.4f", value.asDouble()) : "-";
    }

    private static long at(long[] values, int i) {
        return i < values.length ? values[i] : 0;
    }

    private static void putDouble(ObjectNode node, String field, double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            node.putNull(field);
        } else {
            node.put(field, round(value, 4));
        }
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
