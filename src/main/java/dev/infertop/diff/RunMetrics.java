package dev.infertop.diff;

import dev.infertop.model.HistogramTag;
import dev.infertop.model.JsonSchema;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One run's figures per generated token, from its totals, and the per-interval samples the rank test compares.
 *
 * <p>Time per generated token is the run's llama_decode time (prompt and generation) over the tokens it generated:
 * for a run that only generates, 1000 / its decode tokens/s. An op's time per generated token is its wall time over
 * the same tokens, so the ops and the time outside them add up to that total. When the operator layer traced only
 * part of the graphs (an overhead budget sampling it), the ops' figures are scaled by all graphs over traced graphs.
 */
public final class RunMetrics {
    private final RunRecord run;
    private final JsonNode t;
    private final Map<String, Op> ops = new LinkedHashMap<>();

    /** An op type's figures over the run, per generated token where named so. */
    public record Op(String name, double callsPerToken, double msPerToken, double share, double p50Ms,
                     double p99Ms, double barrierWaitMsPerToken, double gbPerS, double bytesPerToken,
                     String verdict) {

        /** The op's figures as the mean over the runs that ran it (the first one's verdict); null when none did. */
        static Op mean(String name, List<RunMetrics> runs) {
            List<Op> ran = runs.stream().map(r -> r.ops().get(name)).filter(java.util.Objects::nonNull).toList();
            if (ran.isEmpty()) {
                return null;
            }
            if (ran.size() == 1) {
                return ran.getFirst();
            }
            return new Op(name, mean(ran, Op::callsPerToken), mean(ran, Op::msPerToken), mean(ran, Op::share),
                    mean(ran, Op::p50Ms), mean(ran, Op::p99Ms), mean(ran, Op::barrierWaitMsPerToken),
                    mean(ran, Op::gbPerS), mean(ran, Op::bytesPerToken), ran.getFirst().verdict());
        }

        private static double mean(List<Op> ops, java.util.function.ToDoubleFunction<Op> value) {
            return ops.stream().mapToDouble(value).average().orElse(Double.NaN);
        }
    }

    public RunMetrics(RunRecord run) {
        this.run = run;
        this.t = run.totals();
        double wallTotalMs = 0;
        for (JsonNode op : t.path(JsonSchema.OPS.key())) {
            wallTotalMs += op.path(JsonSchema.OpField.WALL_MS.key()).asDouble();
        }
        double scale = opScale();
        long tokens = tokensDecode();
        for (Iterator<Map.Entry<String, JsonNode>> it = t.path(JsonSchema.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            if (op.path(JsonSchema.OpField.GROUPS.key()).asLong() == 0 || tokens == 0 || scale == 0) {
                continue;
            }
            JsonNode roof = t.path(JsonSchema.ROOFLINE.key()).path(JsonSchema.RooflineField.OPS.key()).path(entry.getKey());
            double bytesPerNode = roof.path(JsonSchema.RooflineOpField.NODES.key()).asLong() == 0 ? Double.NaN
                    : roof.path(JsonSchema.RooflineOpField.BYTES.key()).asDouble() / roof.path(JsonSchema.RooflineOpField.NODES.key()).asLong();
            ops.put(entry.getKey(), new Op(entry.getKey(), op.path(JsonSchema.OpField.GROUPS.key()).asDouble() * scale / tokens,
                    op.path(JsonSchema.OpField.WALL_MS.key()).asDouble() * scale / tokens,
                    wallTotalMs <= 0 ? 0 : op.path(JsonSchema.OpField.WALL_MS.key()).asDouble() / wallTotalMs,
                    op.path(JsonSchema.OpField.P50_MS.key()).asDouble(), op.path(JsonSchema.OpField.P99_MS.key()).asDouble(),
                    op.path(JsonSchema.OpField.BARRIER_WAIT_MS.key()).asDouble() * scale / tokens,
                    roof.has(JsonSchema.RooflineOpField.GB_PER_S.key()) ? roof.path(JsonSchema.RooflineOpField.GB_PER_S.key()).asDouble() : Double.NaN,
                    bytesPerNode * op.path(JsonSchema.OpField.NODES.key()).asDouble() * scale / tokens,
                    roof.path(JsonSchema.RooflineOpField.VERDICT.key()).asText("")));
        }
    }

    public RunRecord run() {
        return run;
    }

    public JsonNode totals() {
        return t;
    }

    public long tokensDecode() {
        return t.path(JsonSchema.TOKENS_DECODE.key()).asLong();
    }

    public long tokensPrefill() {
        return t.path(JsonSchema.TOKENS_PREFILL.key()).asLong();
    }

    /** The run's decode rate; NaN when it generated nothing (no rate to compare, rather than a rate of 0). */
    public double decodeTokensPerSecond() {
        return tokensDecode() == 0 ? Double.NaN : t.path(JsonSchema.DECODE_TOKENS_PER_S.key()).asDouble();
    }

    public double prefillTokensPerSecond() {
        return tokensPrefill() == 0 ? Double.NaN : t.path(JsonSchema.PREFILL_TOKENS_PER_S.key()).asDouble();
    }

    /** llama_decode time in generating steps, from the tokens and the rate the run reports. */
    public double decodeBusyMs() {
        return !(decodeTokensPerSecond() > 0) ? 0 : tokensDecode() / decodeTokensPerSecond() * 1e3;
    }

    public double prefillBusyMs() {
        return !(prefillTokensPerSecond() > 0) ? 0 : tokensPrefill() / prefillTokensPerSecond() * 1e3;
    }

    /** The total the ops add up to: all llama_decode time (prompt included) per generated token; NaN without any. */
    public double msPerGeneratedToken() {
        return tokensDecode() == 0 ? Double.NaN : (decodeBusyMs() + prefillBusyMs()) / tokensDecode();
    }

    /** Graphs over graphs the operator layer traced: 1 when it traced them all, 0 when none. */
    public double opScale() {
        long traced = t.path(JsonSchema.OP_GRAPHS.key()).asLong();
        long all = t.path(JsonSchema.CPU_GRAPH_COMPUTES.key()).asLong();
        return traced <= 0 ? 0 : Math.max(1, (double) all / traced);
    }

    public Map<String, Op> ops() {
        return ops;
    }

    public double opsMsPerToken() {
        return ops.values().stream().mapToDouble(Op::msPerToken).sum();
    }

    /** Barrier wait of all traced threads per generated token (scaled as the ops). */
    public double barrierWaitMsPerToken() {
        if (tokensDecode() == 0) {
            return Double.NaN;
        }
        double sum = 0;
        for (JsonNode thread : t.path(JsonSchema.THREADS.key())) {
            sum += thread.path(JsonSchema.ThreadField.BARRIER_WAIT_MS.key()).asDouble();
        }
        return sum * opScale() / tokensDecode();
    }

    public int threads() {
        return t.path(JsonSchema.THREADS.key()).size();
    }

    /** The model weight bytes one decode token streams (the roofline's); NaN when no decode graph was costed. */
    public double weightBytesPerDecodeToken() {
        long bytes = t.path(JsonSchema.ROOFLINE.key()).path(JsonSchema.RooflineField.WEIGHT_BYTES_PER_DECODE_TOKEN.key()).asLong();
        return bytes > 0 ? bytes : Double.NaN;
    }

    /** A percentile of ttft_ms or tpot_ms; NaN when the run counted none. */
    public double latencyMs(JsonSchema field, JsonSchema.LatencyField percentile) {
        return t.path(field.key()).path(JsonSchema.LatencyField.COUNT.key()).asLong() == 0 ? Double.NaN : t.path(field.key()).path(percentile.key()).asDouble();
    }

    /**
     * Decode time per generated token, interval by interval: each interval's mean time per generating step times
     * the run's steps per generated token (1 unless steps carried several sequences' tokens).
     */
    public double[] decodeSamples() {
        long steps = t.path(JsonSchema.TPOT_MS.key()).path(JsonSchema.LatencyField.COUNT.key()).asLong();
        double stepsPerToken = tokensDecode() == 0 ? 0 : (double) steps / tokensDecode();
        return samples(HistogramTag.TPOT, stepsPerToken);
    }

    /** Prompt time per prompt token, interval by interval (mean per prefill call times calls per prompt token). */
    public double[] prefillSamples() {
        long calls = t.path(JsonSchema.TTFT_MS.key()).path(JsonSchema.LatencyField.COUNT.key()).asLong();
        double callsPerToken = tokensPrefill() == 0 ? 0 : (double) calls / tokensPrefill();
        return samples(HistogramTag.TTFT, callsPerToken);
    }

    /**
     * An op's time per generated token, interval by interval: each interval's mean wall time per call (group) times
     * the run's calls per generated token. The calls a token makes are the graph's shape, fixed for a run; the time
     * per call is what moves from interval to interval, and is measured whole in every interval the op was traced
     * in, sampled or not.
     */
    public double[] opSamples(String op) {
        Op figures = ops.get(op);
        return figures == null ? new double[0] : samples(RunLoader.opTag(op), figures.callsPerToken());
    }

    private double[] samples(String tag, double factor) {
        List<RunRecord.Interval> intervals = run.intervals(tag);
        double[] values = new double[intervals.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = intervals.get(i).meanMs() * factor;
        }
        return values;
    }

    /** Interval start times of a tag, for plots. */
    public List<double[]> series(String tag, double factor) {
        List<double[]> points = new ArrayList<>();
        for (RunRecord.Interval interval : run.intervals(tag)) {
            points.add(new double[] {interval.startS(), interval.meanMs() * factor});
        }
        return points;
    }
}
