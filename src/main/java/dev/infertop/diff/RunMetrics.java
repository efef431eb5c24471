package dev.infertop.diff;

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
                     String verdict) {}

    public RunMetrics(RunRecord run) {
        this.run = run;
        this.t = run.totals();
        double wallTotalMs = 0;
        for (JsonNode op : t.path("ops")) {
            wallTotalMs += op.path("wall_ms").asDouble();
        }
        double scale = opScale();
        long tokens = tokensDecode();
        for (Iterator<Map.Entry<String, JsonNode>> it = t.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            if (op.path("groups").asLong() == 0 || tokens == 0 || scale == 0) {
                continue;
            }
            JsonNode roof = t.path("roofline").path("ops").path(entry.getKey());
            double bytesPerNode = roof.path("nodes").asLong() == 0 ? Double.NaN
                    : roof.path("bytes").asDouble() / roof.path("nodes").asLong();
            ops.put(entry.getKey(), new Op(entry.getKey(), op.path("groups").asDouble() * scale / tokens,
                    op.path("wall_ms").asDouble() * scale / tokens,
                    wallTotalMs <= 0 ? 0 : op.path("wall_ms").asDouble() / wallTotalMs,
                    op.path("p50_ms").asDouble(), op.path("p99_ms").asDouble(),
                    op.path("barrier_wait_ms").asDouble() * scale / tokens,
                    roof.has("gb_per_s") ? roof.path("gb_per_s").asDouble() : Double.NaN,
                    bytesPerNode * op.path("nodes").asDouble() * scale / tokens,
                    roof.path("verdict").asText("")));
        }
    }

    public RunRecord run() {
        return run;
    }

    public JsonNode totals() {
        return t;
    }

    public long tokensDecode() {
        return t.path("tokens_decode").asLong();
    }

    public long tokensPrefill() {
        return t.path("tokens_prefill").asLong();
    }

    /** The run's decode rate; NaN when it generated nothing (no rate to compare, rather than a rate of 0). */
    public double decodeTokensPerSecond() {
        return tokensDecode() == 0 ? Double.NaN : t.path("decode_tokens_per_s").asDouble();
    }

    public double prefillTokensPerSecond() {
        return tokensPrefill() == 0 ? Double.NaN : t.path("prefill_tokens_per_s").asDouble();
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
        long traced = t.path("op_graphs").asLong();
        long all = t.path("cpu_graph_computes").asLong();
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
        for (JsonNode thread : t.path("threads")) {
            sum += thread.path("barrier_wait_ms").asDouble();
        }
        return sum * opScale() / tokensDecode();
    }

    public int threads() {
        return t.path("threads").size();
    }

    /** The model weight bytes one decode token streams (the roofline's); NaN when no decode graph was costed. */
    public double weightBytesPerDecodeToken() {
        long bytes = t.path("roofline").path("weight_bytes_per_decode_token").asLong();
        return bytes > 0 ? bytes : Double.NaN;
    }

    /** A percentile of ttft_ms or tpot_ms; NaN when the run counted none. */
    public double latencyMs(String field, String percentile) {
        return t.path(field).path("count").asLong() == 0 ? Double.NaN : t.path(field).path(percentile).asDouble();
    }

    /**
     * Decode time per generated token, interval by interval: each interval's mean time per generating step times
     * the run's steps per generated token (1 unless steps carried several sequences' tokens).
     */
    public double[] decodeSamples() {
        long steps = t.path("tpot_ms").path("count").asLong();
        double stepsPerToken = tokensDecode() == 0 ? 0 : (double) steps / tokensDecode();
        return samples("tpot", stepsPerToken);
    }

    /** Prompt time per prompt token, interval by interval (mean per prefill call times calls per prompt token). */
    public double[] prefillSamples() {
        long calls = t.path("ttft_ms").path("count").asLong();
        double callsPerToken = tokensPrefill() == 0 ? 0 : (double) calls / tokensPrefill();
        return samples("ttft", callsPerToken);
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
