package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema;
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
        JsonNode roofline = summary.path(JsonSchema.ROOFLINE.key());
        if (!roofline.isObject()) {
            return RooflineTotals.EMPTY; // the operator layer was off, or an infertop before the roofline
        }
        List<RooflineTotals.OpRoofline> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = roofline.path(JsonSchema.RooflineField.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            ops.add(new RooflineTotals.OpRoofline(entry.getKey(), op.path(JsonSchema.RooflineOpField.NODES.key()).asLong(), op.path(JsonSchema.RooflineOpField.BYTES.key()).asLong(),
                    op.path(JsonSchema.RooflineOpField.WEIGHT_BYTES.key()).asLong(), op.path(JsonSchema.RooflineOpField.FLOPS.key()).asLong(),
                    Math.round(op.path(JsonSchema.RooflineOpField.WALL_MS.key()).asDouble() * 1e6)));
        }
        Roofline.Ceilings ceilings = null;
        double memory = roofline.path(JsonSchema.RooflineField.MEMORY_CEILING_GB_PER_S.key()).asDouble();
        double compute = roofline.path(JsonSchema.RooflineField.COMPUTE_CEILING_GFLOP_PER_S.key()).asDouble();
        if (memory > 0 && compute > 0) {
            ceilings = new Roofline.Ceilings(memory * 1e9, compute * 1e9);
        }
        return new RooflineTotals(ops, roofline.path(JsonSchema.RooflineField.DECODE_GRAPHS.key()).asLong(),
                roofline.path(JsonSchema.RooflineField.WEIGHT_BYTES_PER_DECODE_TOKEN.key()).asLong(), ceilings);
    }

    /** The report's roofline: summary.json's object as it is, or {@code recorded: false} with why. */
    static void put(ObjectNode root, JsonNode summary) {
        JsonNode roofline = summary.path(JsonSchema.ROOFLINE.key());
        if (roofline.isObject()) {
            ObjectNode node = root.putObject(JsonSchema.ROOFLINE.key());
            node.put("recorded", true);
            node.setAll((ObjectNode) roofline.deepCopy());
        } else {
            root.putObject(JsonSchema.ROOFLINE.key()).put("recorded", false).put("reason", DeepLayerReport.NOT_RECORDED
                    + " (no costed node: the operator layer was off, or no MUL_MAT ran)");
        }
    }

    static void print(JsonNode report, PrintStream out) {
        JsonNode r = report.path(JsonSchema.ROOFLINE.key());
        out.println();
        out.println("Roofline (bytes and FLOPs from the nodes' shapes and types, over the run)");
        if (!r.path("recorded").asBoolean()) {
            out.println("  " + r.path("reason").asText());
            return;
        }
        boolean ceilings = r.has(JsonSchema.RooflineField.MEMORY_CEILING_GB_PER_S.key());
        if (ceilings) {
            out.printf(Locale.ROOT, "  memory ceiling %.2f GB/s, compute ceiling %.2f GFLOP/s, ridge %.3f FLOP/byte%n",
                    r.path(JsonSchema.RooflineField.MEMORY_CEILING_GB_PER_S.key()).asDouble(), r.path(JsonSchema.RooflineField.COMPUTE_CEILING_GFLOP_PER_S.key()).asDouble(),
                    r.path(JsonSchema.RooflineField.RIDGE_FLOP_PER_BYTE.key()).asDouble());
        } else {
            out.println("  no ceilings were cached for this machine: run `infertop machine --measure` for a verdict");
        }
        out.printf(Locale.ROOT, "  decode: %smeasured %.2f tok/s; %d weight bytes per token%n",
                r.has(JsonSchema.RooflineField.DECODE_BOUND_TOKENS_PER_S.key()) ? String.format(Locale.ROOT, "bound %.2f tok/s, ",
                        r.path(JsonSchema.RooflineField.DECODE_BOUND_TOKENS_PER_S.key()).asDouble()) : "",
                r.path(JsonSchema.RooflineField.MEASURED_DECODE_TOKENS_PER_S.key()).asDouble(), r.path(JsonSchema.RooflineField.WEIGHT_BYTES_PER_DECODE_TOKEN.key()).asLong());
        List<Map.Entry<String, JsonNode>> ops = new ArrayList<>();
        r.path(JsonSchema.RooflineField.OPS.key()).fields().forEachRemaining(ops::add);
        ops.sort(Comparator.comparingDouble((Map.Entry<String, JsonNode> e) -> e.getValue().path(JsonSchema.RooflineOpField.WALL_MS.key()).asDouble())
                .reversed());
        out.printf(Locale.ROOT, "  %-20s %9s %9s %9s %9s %5s %5s %s%n", "OP", "NODES", "GB/s", "GFLOP/s", "FLOP/B",
                "%MEM", "%CMP", "VERDICT");
        for (Map.Entry<String, JsonNode> entry : ops) {
            JsonNode op = entry.getValue();
            out.printf(Locale.ROOT, "  %-20s %9d %9.2f %9.2f %9.3f %5s %5s %s%n",
                    name(entry.getKey()),
                    op.path(JsonSchema.RooflineOpField.NODES.key()).asLong(), op.path(JsonSchema.RooflineOpField.GB_PER_S.key()).asDouble(), op.path(JsonSchema.RooflineOpField.GFLOP_PER_S.key()).asDouble(),
                    op.path(JsonSchema.RooflineOpField.FLOP_PER_BYTE.key()).asDouble(), share(op, JsonSchema.RooflineOpField.MEMORY_SHARE), share(op, JsonSchema.RooflineOpField.COMPUTE_SHARE),
                    op.path(JsonSchema.RooflineOpField.VERDICT.key()).asText("-"));
        }
    }

    /** An op name from the target, as a terminal may show it: controls made visible, at most 20 characters. */
    private static String name(String raw) {
        String text = dev.infertop.model.SafeText.of(raw);
        return text.length() > 20 ? text.substring(0, 20) : text;
    }

    private static String share(JsonNode op, JsonSchema.RooflineOpField field) {
        return op.has(field.key()) ? String.format(Locale.ROOT, "%.0f", 100 * op.path(field.key()).asDouble()) : "-";
    }
}
