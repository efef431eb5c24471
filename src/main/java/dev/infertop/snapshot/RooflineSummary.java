package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The roofline of a saved snapshot, from summary.json's roofline object: for replay's roofline panel each op's
 * bytes, weight bytes, FLOPs and wall time (to the summary's microsecond), the weight bytes per decode token,
 * and the ceilings the run was held against (to the summary's 10 MB/s and 10 MFLOP/s), none when it had none;
 * for {@code infertop report} the object itself and a table of it.
 */
final class RooflineSummary {
    private RooflineSummary() {}

    static RooflineTotals totals(JsonNode summary) {
        JsonNode roofline = summary.path("roofline");
        if (!roofline.isObject()) {
            return RooflineTotals.EMPTY; // the operator layer was off, or an infertop before the roofline
        }
        List<RooflineTotals.OpRoofline> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = roofline.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            ops.add(new RooflineTotals.OpRoofline(entry.getKey(), op.path("nodes").asLong(), op.path("bytes").asLong(),
                    op.path("weight_bytes").asLong(), op.path("flops").asLong(),
                    Math.round(op.path("wall_ms").asDouble() * 1e6)));
        }
        Roofline.Ceilings ceilings = null;
        double memory = roofline.path("memory_ceiling_gb_per_s").asDouble();
        double compute = roofline.path("compute_ceiling_gflop_per_s").asDouble();
        if (memory > 0 && compute > 0) {
            ceilings = new Roofline.Ceilings(memory * 1e9, compute * 1e9);
        }
        return new RooflineTotals(ops, roofline.path("decode_graphs").asLong(),
                roofline.path("weight_bytes_per_decode_token").asLong(), ceilings);
    }

    /** The report's roofline: summary.json's object as it is, or {@code recorded: false} with why. */
    static void put(ObjectNode root, JsonNode summary) {
        JsonNode roofline = summary.path("roofline");
        if (roofline.isObject()) {
            ObjectNode node = root.putObject("roofline");
            node.put("recorded", true);
            node.setAll((ObjectNode) roofline.deepCopy());
        } else {
            root.putObject("roofline").put("recorded", false).put("reason", DeepLayerReport.NOT_RECORDED
                    + " (no costed node: the operator layer was off, or no MUL_MAT ran)");
        }
    }

    static void print(JsonNode report, PrintStream out) {
        JsonNode r = report.path("roofline");
        out.println();
        out.println("Roofline (bytes and FLOPs from the nodes' shapes and types, over the run)");
        if (!r.path("recorded").asBoolean()) {
            out.println("  " + r.path("reason").asText());
            return;
        }
        boolean ceilings = r.has("memory_ceiling_gb_per_s");
        if (ceilings) {
            out.printf(Locale.ROOT, "  memory ceiling %.2f GB/s, compute ceiling %.2f GFLOP/s, ridge %.3f FLOP/byte%n",
                    r.path("memory_ceiling_gb_per_s").asDouble(), r.path("compute_ceiling_gflop_per_s").asDouble(),
                    r.path("ridge_flop_per_byte").asDouble());
        } else {
            out.println("  no ceilings were cached for this machine: run `infertop machine --measure` for a verdict");
        }
        out.printf(Locale.ROOT, "  decode: %smeasured %.2f tok/s; %d weight bytes per token%n",
                r.has("decode_bound_tokens_per_s") ? String.format(Locale.ROOT, "bound %.2f tok/s, ",
                        r.path("decode_bound_tokens_per_s").asDouble()) : "",
                r.path("measured_decode_tokens_per_s").asDouble(), r.path("weight_bytes_per_decode_token").asLong());
        List<Map.Entry<String, JsonNode>> ops = new ArrayList<>();
        r.path("ops").fields().forEachRemaining(ops::add);
        ops.sort(Comparator.comparingDouble((Map.Entry<String, JsonNode> e) -> e.getValue().path("wall_ms").asDouble())
                .reversed());
        out.printf(Locale.ROOT, "  %-20s %9s %9s %9s %9s %5s %5s %s%n", "OP", "NODES", "GB/s", "GFLOP/s", "FLOP/B",
                "%MEM", "%CMP", "VERDICT");
        for (Map.Entry<String, JsonNode> entry : ops) {
            JsonNode op = entry.getValue();
            out.printf(Locale.ROOT, "  %-20s %9d %9.2f %9.2f %9.3f %5s %5s %s%n",
                    name(entry.getKey()),
                    op.path("nodes").asLong(), op.path("gb_per_s").asDouble(), op.path("gflop_per_s").asDouble(),
                    op.path("flop_per_byte").asDouble(), share(op, "memory_share"), share(op, "compute_share"),
                    op.path("verdict").asText("-"));
        }
    }

    /** An op name from the target, as a terminal may show it: controls made visible, at most 20 characters. */
    private static String name(String raw) {
        String text = dev.infertop.model.SafeText.of(raw);
        return text.length() > 20 ? text.substring(0, 20) : text;
    }

    private static String share(JsonNode op, String field) {
        return op.has(field) ? String.format(Locale.ROOT, "%.0f", 100 * op.path(field).asDouble()) : "-";
    }
}
