package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.HistogramTag;
import dev.infertop.model.JsonSchema;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.Percentiles;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code infertop report DIR}: a snapshot's statistics, like ProfStat's views: across tokens (TTFT, TPOT,
 * tokens/s), per op type (wall time and its percentiles), across experts (when the MoE layer recorded them).
 * Latency percentiles are computed again from latency.hlog, so the report also proves the log holds the run.
 */
public final class SnapshotReport {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private SnapshotReport() {}

    public static ObjectNode json(SnapshotDirectory directory) {
        JsonNode s = directory.summary();
        ObjectNode root = MAPPER.createObjectNode();
        root.put("snapshot", directory.directory().toString());
        root.put("created", s.path(JsonSchema.SNAPSHOT.key()).path(JsonSchema.SnapshotField.CREATED.key()).asText());
        root.put("trigger", s.path(JsonSchema.SNAPSHOT.key()).path(JsonSchema.SnapshotField.TRIGGER.key()).asText());
        root.put(JsonSchema.PID.key(), s.path(JsonSchema.PID.key()).asInt());
        root.put(JsonSchema.COMMAND.key(), s.path(JsonSchema.COMMAND.key()).asText());
        if (s.hasNonNull(JsonSchema.MODEL.key())) {
            root.put(JsonSchema.MODEL.key(), s.path(JsonSchema.MODEL.key()).asText());
        }
        root.put(JsonSchema.SPAN_S.key(), s.path(JsonSchema.SPAN_S.key()).asDouble());
        ObjectNode tokens = root.putObject("tokens");
        tokens.put(JsonSchema.TOKENS_PREFILL.key(), s.path(JsonSchema.TOKENS_PREFILL.key()).asLong());
        tokens.put(JsonSchema.TOKENS_DECODE.key(), s.path(JsonSchema.TOKENS_DECODE.key()).asLong());
        tokens.put(JsonSchema.PREFILL_TOKENS_PER_S.key(), s.path(JsonSchema.PREFILL_TOKENS_PER_S.key()).asDouble());
        tokens.put(JsonSchema.DECODE_TOKENS_PER_S.key(), s.path(JsonSchema.DECODE_TOKENS_PER_S.key()).asDouble());
        // Encoder passes (0 in a summary from before they were counted), apart from the decode figures above.
        tokens.put(JsonSchema.ENCODE_CALLS.key(), s.path(JsonSchema.ENCODE_CALLS.key()).asLong(0));
        tokens.put(JsonSchema.ENCODE_TOKENS.key(), s.path(JsonSchema.ENCODE_TOKENS.key()).asLong(0));
        latency(tokens.putObject(JsonSchema.TTFT_MS.key()), directory.totalsByTag().get(HistogramTag.TTFT));
        latency(tokens.putObject(JsonSchema.TPOT_MS.key()), directory.totalsByTag().get(HistogramTag.TPOT));
        ObjectNode ops = root.putObject(JsonSchema.OPS.key());
        double wallTotalMs = 0;
        for (JsonNode op : s.path(JsonSchema.OPS.key())) {
            wallTotalMs += op.path(JsonSchema.OpField.WALL_MS.key()).asDouble();
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path(JsonSchema.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            ObjectNode op = ops.putObject(entry.getKey());
            op.put(JsonSchema.OpField.GROUPS.key(), entry.getValue().path(JsonSchema.OpField.GROUPS.key()).asLong());
            op.put(JsonSchema.OpField.NODES.key(), entry.getValue().path(JsonSchema.OpField.NODES.key()).asLong());
            op.put(JsonSchema.OpField.WALL_MS.key(), entry.getValue().path(JsonSchema.OpField.WALL_MS.key()).asDouble());
            op.put("share", wallTotalMs <= 0 ? 0 : round(entry.getValue().path(JsonSchema.OpField.WALL_MS.key()).asDouble() / wallTotalMs, 4));
            Histogram histogram = directory.totalsByTag().get(IntervalHistograms.logTag(HistogramTag.op(entry.getKey())));
            long[] ns = histogram == null ? new long[3] : Percentiles.valuesAt(histogram, 50, 90, 99);
            op.put(JsonSchema.OpField.P50_MS.key(), round(ns[0] / 1e6, 4));
            op.put(JsonSchema.OpField.P90_MS.key(), round(ns[1] / 1e6, 4));
            op.put(JsonSchema.OpField.P99_MS.key(), round(ns[2] / 1e6, 4));
            op.put(JsonSchema.OpField.MAX_MS.key(), round(histogram == null ? 0 : histogram.getMaxValue() / 1e6, 4));
        }
        DeepLayerReport.putSched(root, s);
        DeepLayerReport.putCounters(root, s);
        RooflineSummary.put(root, s);
        MoeSummary.put(root, s);
        return root;
    }

    public static void printText(SnapshotDirectory directory, PrintStream out) {
        ObjectNode r = json(directory);
        out.printf(Locale.ROOT, "infertop snapshot %s: %s pid %d%s, %.1f s, taken %s (%s)%n",
                r.path(JsonSchema.SNAPSHOT.key()).asText(), r.path(JsonSchema.COMMAND.key()).asText(), r.path(JsonSchema.PID.key()).asInt(),
                r.has(JsonSchema.MODEL.key()) ? " model " + r.path(JsonSchema.MODEL.key()).asText() : "", r.path(JsonSchema.SPAN_S.key()).asDouble(),
                r.path("created").asText(), r.path("trigger").asText());
        JsonNode tokens = r.path("tokens");
        out.println();
        out.println("Across tokens");
        out.printf(Locale.ROOT, "  prefill %8d tokens %10.2f tok/s   TTFT ms %s%n", tokens.path(JsonSchema.TOKENS_PREFILL.key()).asLong(),
                tokens.path(JsonSchema.PREFILL_TOKENS_PER_S.key()).asDouble(), latencyText(tokens.path(JsonSchema.TTFT_MS.key())));
        out.printf(Locale.ROOT, "  decode  %8d tokens %10.2f tok/s   TPOT ms %s%n", tokens.path(JsonSchema.TOKENS_DECODE.key()).asLong(),
                tokens.path(JsonSchema.DECODE_TOKENS_PER_S.key()).asDouble(), latencyText(tokens.path(JsonSchema.TPOT_MS.key())));
        if (tokens.path(JsonSchema.ENCODE_CALLS.key()).asLong() > 0) {
            out.printf(Locale.ROOT, "  encode  %8d tokens in %d encoder passes (not in the figures above)%n",
                    tokens.path(JsonSchema.ENCODE_TOKENS.key()).asLong(), tokens.path(JsonSchema.ENCODE_CALLS.key()).asLong());
        }
        out.println();
        out.println("Per op type (wall time per op group)");
        List<Map.Entry<String, JsonNode>> ops = new ArrayList<>();
        r.path(JsonSchema.OPS.key()).fields().forEachRemaining(ops::add);
        if (ops.isEmpty()) {
            out.println("  not recorded in this snapshot (operator layer off or unavailable)");
        } else {
            out.printf(Locale.ROOT, "  %-28s %9s %11s %6s %9s %9s %9s %9s%n", "OP", "GROUPS", "WALL ms", "SHARE",
                    "p50 ms", "p90 ms", "p99 ms", "max ms");
            for (Map.Entry<String, JsonNode> entry : ops) {
                JsonNode op = entry.getValue();
                out.printf(Locale.ROOT, "  %-28s %9d %11.3f %5.1f%% %9.4f %9.4f %9.4f %9.4f%n",
                        entry.getKey().length() > 28 ? entry.getKey().substring(0, 28) : entry.getKey(),
                        op.path(JsonSchema.OpField.GROUPS.key()).asLong(), op.path(JsonSchema.OpField.WALL_MS.key()).asDouble(), 100 * op.path("share").asDouble(),
                        op.path(JsonSchema.OpField.P50_MS.key()).asDouble(), op.path(JsonSchema.OpField.P90_MS.key()).asDouble(), op.path(JsonSchema.OpField.P99_MS.key()).asDouble(),
                        op.path(JsonSchema.OpField.MAX_MS.key()).asDouble());
            }
        }
        DeepLayerReport.printSched(r, out);
        DeepLayerReport.printCounters(r, out);
        RooflineSummary.print(r, out);
        MoeSummary.print(r, out);
    }

    private static String latencyText(JsonNode latency) {
        if (latency.path(JsonSchema.LatencyField.COUNT.key()).asLong() == 0) {
            return "none";
        }
        return String.format(Locale.ROOT, "p50 %.4f p90 %.4f p99 %.4f max %.4f (n=%d)", latency.path(JsonSchema.LatencyField.P50.key()).asDouble(),
                latency.path(JsonSchema.LatencyField.P90.key()).asDouble(), latency.path(JsonSchema.LatencyField.P99.key()).asDouble(), latency.path(JsonSchema.LatencyField.MAX.key()).asDouble(),
                latency.path(JsonSchema.LatencyField.COUNT.key()).asLong());
    }

    private static void latency(ObjectNode node, Histogram histogram) {
        if (histogram == null || histogram.getTotalCount() == 0) {
            node.put(JsonSchema.LatencyField.COUNT.key(), 0);
            node.put(JsonSchema.LatencyField.P50.key(), 0.0);
            node.put(JsonSchema.LatencyField.P90.key(), 0.0);
            node.put(JsonSchema.LatencyField.P99.key(), 0.0);
            node.put(JsonSchema.LatencyField.MAX.key(), 0.0);
            node.put(JsonSchema.LatencyField.MEAN.key(), 0.0);
            return;
        }
        long[] ns = Percentiles.valuesAt(histogram, 50, 90, 99);
        node.put(JsonSchema.LatencyField.COUNT.key(), histogram.getTotalCount());
        node.put(JsonSchema.LatencyField.P50.key(), round(ns[0] / 1e6, 4));
        node.put(JsonSchema.LatencyField.P90.key(), round(ns[1] / 1e6, 4));
        node.put(JsonSchema.LatencyField.P99.key(), round(ns[2] / 1e6, 4));
        node.put(JsonSchema.LatencyField.MAX.key(), round(histogram.getMaxValue() / 1e6, 4));
        node.put(JsonSchema.LatencyField.MEAN.key(), round(histogram.getMean() / 1e6, 4));
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
