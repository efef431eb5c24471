package dev.infertop.diff;

import dev.infertop.model.JsonSchema;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * MoE expert shares: each expert's share of all expert selections over the run (every MoE layer, prompt and
 * generation), when both runs recorded them (the moe layer on). Shares are not rank-tested: a snapshot keeps the
 * counts of the run, not of each interval.
 */
final class Experts {
    /** As MoeSummary: no model has more experts per layer. */
    static final int MAX_EXPERTS = 1024;

    private Experts() {}

    /** Each side's shares, the mean over its runs (a run without them leaves the side without them). */
    static List<Change> shares(List<JsonNode> a, List<JsonNode> b) {
        double[] sharesA = meanShares(a);
        double[] sharesB = meanShares(b);
        if (sharesA.length == 0 || sharesB.length == 0) {
            return List.of();
        }
        List<Change> changes = new ArrayList<>();
        for (int e = 0; e < Math.max(sharesA.length, sharesB.length); e++) {
            changes.add(Change.untested("expert " + e, "%", e < sharesA.length ? 100 * sharesA[e] : 0,
                    e < sharesB.length ? 100 * sharesB[e] : 0, false));
        }
        return List.copyOf(changes);
    }

    private static double[] meanShares(List<JsonNode> runs) {
        double[] sum = new double[0];
        for (JsonNode run : runs) {
            double[] shares = shares(run);
            if (shares.length == 0) {
                return shares;
            }
            if (shares.length > sum.length) {
                sum = java.util.Arrays.copyOf(sum, shares.length);
            }
            for (int e = 0; e < shares.length; e++) {
                sum[e] += shares[e] / runs.size();
            }
        }
        return sum;
    }

    static double[] shares(JsonNode totals) {
        JsonNode layers = totals.path(JsonSchema.MOE.key()).path(JsonSchema.MoeField.LAYERS.key());
        int experts = (int) Math.min(MAX_EXPERTS, totals.path(JsonSchema.MOE.key()).path(JsonSchema.MoeField.EXPERTS.key()).asLong());
        if (!layers.isObject() || experts <= 0) {
            return new double[0];
        }
        double[] counts = new double[experts];
        double sum = 0;
        for (JsonNode layer : layers) {
            for (String phase : List.of("prefill", "decode")) {
                JsonNode values = layer.path(phase);
                for (int e = 0; e < Math.min(experts, values.size()); e++) {
                    counts[e] += values.path(e).asDouble();
                    sum += values.path(e).asDouble();
                }
            }
        }
        if (sum <= 0) {
            return new double[0];
        }
        for (int e = 0; e < experts; e++) {
            counts[e] /= sum;
        }
        return counts;
    }
}
