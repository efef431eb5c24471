package dev.infertop.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The roofline of a saved snapshot, from summary.json's roofline object, for replay's roofline panel: each op's
 * bytes, weight bytes, FLOPs and wall time (to the summary's microsecond), the weight bytes per decode token,
 * and the ceilings the run was held against (to the summary's 10 MB/s and 10 MFLOP/s), none when it had none.
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
}
