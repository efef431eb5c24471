package dev.infertop.snapshot;

import dev.infertop.model.SafeText;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.JsonSchema;
import dev.infertop.model.DecodeSteps;
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
                roofline.path(JsonSchema.RooflineField.WEIGHT_BYTES_PER_DECODE_TOKEN.key()).asLong(), 0, 0, 0, ceilings,
                decodeSteps(roofline), roofline.path(JsonSchema.RooflineField.KV_BYTES_PER_POSITION.key()).asLong());
    }

    /** The decode steps by size, back from their per-step figures (an infertop before them had none). */
    private static List<DecodeSteps> decodeSteps(JsonNode roofline) {
        List<DecodeSteps> steps = new ArrayList<>();
        roofline.path(JsonSchema.RooflineField.DECODE_STEPS.key()).properties().forEach(entry -> {
            JsonNode step = entry.getValue();
            long count = step.path(JsonSchema.DecodeStepField.STEPS.key()).asLong();
            int batch;
            try {
                batch = Integer.parseInt(entry.getKey());
            } catch (NumberFormatException e) {
                return; // not a size: a hand-edited file, left out
            }
            if (count <= 0 || batch <= 0) {
                return;
            }
            steps.add(new DecodeSteps(batch, count, step.path(JsonSchema.DecodeStepField.TOKENS.key()).asLong(),
                    count * step.path(JsonSchema.DecodeStepField.WEIGHT_BYTES_PER_STEP.key()).asLong(),
                    count * step.path(JsonSchema.DecodeStepField.KV_BYTES_PER_STEP.key()).asLong(),
                    Math.round(count * step.path(JsonSchema.DecodeStepField.CONTEXT_POSITIONS_PER_STEP.key()).asDouble()),
                    count * step.path(JsonSchema.DecodeStepField.FLOPS_PER_STEP.key()).asLong(),
                    Math.round(step.path(JsonSchema.DecodeStepField.WALL_MS.key()).asDouble() * 1e6)));
        });
        return steps;
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
        printDecodeSteps(r, out);
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

    /** Decode steps by size (a server's busy slots), as the live view's roofline panel lists them. */
    private static void printDecodeSteps(JsonNode r, PrintStream out) {
        JsonNode steps = r.path(JsonSchema.RooflineField.DECODE_STEPS.key());
        if (!steps.isObject() || steps.isEmpty()) {
            return;
        }
        out.printf(Locale.ROOT, "  decode steps: KV %d bytes per context position%s%s%n",
                r.path(JsonSchema.RooflineField.KV_BYTES_PER_POSITION.key()).asLong(),
                r.has(JsonSchema.RooflineField.RIDGE_BATCH_TOKENS.key()) ? "; ridge reached at "
                        + r.path(JsonSchema.RooflineField.RIDGE_BATCH_TOKENS.key()).asText() + " busy sequences" : "",
                r.path(JsonSchema.RooflineField.KV_OVERTAKES_WEIGHTS_AT_POSITIONS.key()).asLong() > 0
                        ? "; KV reads pass the weights past " + r.path(JsonSchema.RooflineField
                        .KV_OVERTAKES_WEIGHTS_AT_POSITIONS.key()).asLong() + " positions a step" : "");
        out.printf(Locale.ROOT, "  %6s %7s %12s %12s %12s %9s %10s %10s %s%n", "TOK/ST", "STEPS", "WEIGHTS B/ST",
                "KV B/ST", "B/TOKEN", "FLOP/B", "TOK/S", "BOUND", "VERDICT");
        List<Map.Entry<String, JsonNode>> sizes = new ArrayList<>(steps.properties());
        sizes.sort(Comparator.comparingLong(e -> e.getKey().chars().allMatch(Character::isDigit) && !e.getKey().isEmpty()
                && e.getKey().length() < 10 ? Long.parseLong(e.getKey()) : Long.MAX_VALUE));
        for (Map.Entry<String, JsonNode> entry : sizes) {
            JsonNode step = entry.getValue();
            out.printf(Locale.ROOT, "  %6s %7d %12d %12d %12d %9.3f %10.1f %10s %s%n", name(entry.getKey()),
                    step.path(JsonSchema.DecodeStepField.STEPS.key()).asLong(),
                    step.path(JsonSchema.DecodeStepField.WEIGHT_BYTES_PER_STEP.key()).asLong(),
                    step.path(JsonSchema.DecodeStepField.KV_BYTES_PER_STEP.key()).asLong(),
                    step.path(JsonSchema.DecodeStepField.WEIGHT_BYTES_PER_TOKEN.key()).asLong()
                            + step.path(JsonSchema.DecodeStepField.KV_BYTES_PER_TOKEN.key()).asLong(),
                    step.path(JsonSchema.DecodeStepField.FLOP_PER_BYTE.key()).asDouble(),
                    step.path(JsonSchema.DecodeStepField.MEASURED_TOKENS_PER_S.key()).asDouble(),
                    step.has(JsonSchema.DecodeStepField.BOUND_TOKENS_PER_S.key()) ? String.format(Locale.ROOT, "%.1f",
                            step.path(JsonSchema.DecodeStepField.BOUND_TOKENS_PER_S.key()).asDouble()) : "-",
                    SafeText.of(step.path(JsonSchema.DecodeStepField.VERDICT.key()).asText("-")));
        }
    }

    /** An op name from the target, as a terminal may show it: controls made visible, at most 20 characters. */
    private static String name(String raw) {
        String text = SafeText.of(raw);
        return text.length() > 20 ? text.substring(0, 20) : text;
    }

    private static String share(JsonNode op, JsonSchema.RooflineOpField field) {
        return op.has(field.key()) ? String.format(Locale.ROOT, "%.0f", 100 * op.path(field.key()).asDouble()) : "-";
    }
}
