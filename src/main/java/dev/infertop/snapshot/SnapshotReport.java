package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
        root.put("created", s.path("snapshot").path("created").asText());
        root.put("trigger", s.path("snapshot").path("trigger").asText());
        root.put("pid", s.path("pid").asInt());
        root.put("command", s.path("command").asText());
        if (s.hasNonNull("model")) {
            root.put("model", s.path("model").asText());
        }
        root.put("span_s", s.path("span_s").asDouble());
        ObjectNode tokens = root.putObject("tokens");
        tokens.put("tokens_prefill", s.path("tokens_prefill").asLong());
        tokens.put("tokens_decode", s.path("tokens_decode").asLong());
        tokens.put("prefill_tokens_per_s", s.path("prefill_tokens_per_s").asDouble());
        tokens.put("decode_tokens_per_s", s.path("decode_tokens_per_s").asDouble());
        // Encoder passes (0 in a summary from before they were counted), apart from the decode figures above.
        tokens.put("encode_calls", s.path("encode_calls").asLong(0));
        tokens.put("encode_tokens", s.path("encode_tokens").asLong(0));
        latency(tokens.putObject("ttft_ms"), directory.totalsByTag().get("ttft"));
        latency(tokens.putObject("tpot_ms"), directory.totalsByTag().get("tpot"));
        ObjectNode ops = root.putObject("ops");
        double wallTotalMs = 0;
        for (JsonNode op : s.path("ops")) {
            wallTotalMs += op.path("wall_ms").asDouble();
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            ObjectNode op = ops.putObject(entry.getKey());
            op.put("groups", entry.getValue().path("groups").asLong());
            op.put("nodes", entry.getValue().path("nodes").asLong());
            op.put("wall_ms", entry.getValue().path("wall_ms").asDouble());
            op.put("share", wallTotalMs <= 0 ? 0 : round(entry.getValue().path("wall_ms").asDouble() / wallTotalMs, 4));
            Histogram histogram = directory.totalsByTag().get(IntervalHistograms.logTag("op:" + entry.getKey()));
            long[] ns = histogram == null ? new long[3] : Percentiles.valuesAt(histogram, 50, 90, 99);
            op.put("p50_ms", round(ns[0] / 1e6, 4));
            op.put("p90_ms", round(ns[1] / 1e6, 4));
            op.put("p99_ms", round(ns[2] / 1e6, 4));
            op.put("max_ms", round(histogram == null ? 0 : histogram.getMaxValue() / 1e6, 4));
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
                r.path("snapshot").asText(), r.path("command").asText(), r.path("pid").asInt(),
                r.has("model") ? " model " + r.path("model").asText() : "", r.path("span_s").asDouble(),
                r.path("created").asText(), r.path("trigger").asText());
        JsonNode tokens = r.path("tokens");
        out.println();
        out.println("Across tokens");
        out.printf(Locale.ROOT, "  prefill %8d tokens %10.2f tok/s   TTFT ms %s%n", tokens.path("tokens_prefill").asLong(),
                tokens.path("prefill_tokens_per_s").asDouble(), latencyText(tokens.path("ttft_ms")));
        out.printf(Locale.ROOT, "  decode  %8d tokens %10.2f tok/s   TPOT ms %s%n", tokens.path("tokens_decode").asLong(),
                tokens.path("decode_tokens_per_s").asDouble(), latencyText(tokens.path("tpot_ms")));
        if (tokens.path("encode_calls").asLong() > 0) {
            out.printf(Locale.ROOT, "  encode  %8d tokens in %d encoder passes (not in the figures above)%n",
                    tokens.path("encode_tokens").asLong(), tokens.path("encode_calls").asLong());
        }
        out.println();
        out.println("Per op type (wall time per op group)");
        List<Map.Entry<String, JsonNode>> ops = new ArrayList<>();
        r.path("ops").fields().forEachRemaining(ops::add);
        if (ops.isEmpty()) {
            out.println("  not recorded in this snapshot (operator layer off or unavailable)");
        } else {
            out.printf(Locale.ROOT, "  %-28s %9s %11s %6s %9s %9s %9s %9s%n", "OP", "GROUPS", "WALL ms", "SHARE",
                    "p50 ms", "p90 ms", "p99 ms", "max ms");
            for (Map.Entry<String, JsonNode> entry : ops) {
                JsonNode op = entry.getValue();
                out.printf(Locale.ROOT, "  %-28s %9d %11.3f %5.1f%% %9.4f %9.4f %9.4f %9.4f%n",
                        entry.getKey().length() > 28 ? entry.getKey().substring(0, 28) : entry.getKey(),
                        op.path("groups").asLong(), op.path("wall_ms").asDouble(), 100 * op.path("share").asDouble(),
                        op.path("p50_ms").asDouble(), op.path("p90_ms").asDouble(), op.path("p99_ms").asDouble(),
                        op.path("max_ms").asDouble());
            }
        }
        DeepLayerReport.printSched(r, out);
        DeepLayerReport.printCounters(r, out);
        RooflineSummary.print(r, out);
        MoeSummary.print(r, out);
    }

    private static String latencyText(JsonNode latency) {
        if (latency.path("count").asLong() == 0) {
            return "none";
        }
        return String.format(Locale.ROOT, "p50 %.4f p90 %.4f p99 %.4f max %.4f (n=%d)", latency.path("p50").asDouble(),
                latency.path("p90").asDouble(), latency.path("p99").asDouble(), latency.path("max").asDouble(),
                latency.path("count").asLong());
    }

    private static void latency(ObjectNode node, Histogram histogram) {
        if (histogram == null || histogram.getTotalCount() == 0) {
            node.put("count", 0);
            node.put("p50", 0.0);
            node.put("p90", 0.0);
            node.put("p99", 0.0);
            node.put("max", 0.0);
            node.put("mean", 0.0);
            return;
        }
        long[] ns = Percentiles.valuesAt(histogram, 50, 90, 99);
        node.put("count", histogram.getTotalCount());
        node.put("p50", round(ns[0] / 1e6, 4));
        node.put("p90", round(ns[1] / 1e6, 4));
        node.put("p99", round(ns[2] / 1e6, 4));
        node.put("max", round(histogram.getMaxValue() / 1e6, 4));
        node.put("mean", round(histogram.getMean() / 1e6, 4));
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
