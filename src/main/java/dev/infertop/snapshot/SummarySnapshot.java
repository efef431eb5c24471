package dev.infertop.snapshot;

import dev.infertop.model.WhisperTotals;
import dev.infertop.model.JsonSchema;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.SafeText;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.model.BackendBreakdown;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.Figures;
import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.RunState;
import dev.infertop.model.SafeText;
import dev.infertop.model.Snapshot;
import dev.infertop.model.SpeculativeTotals;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.ThreadTotals;
import dev.infertop.model.TokenTotals;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A saved snapshot as the {@link Snapshot} the live view draws: the run's totals from summary.json (so replay
 * shows the summary's numbers), each op's latency plot from its latency.hlog histogram. Interval and total
 * figures are the same {@link dev.infertop.model.Figures} (a frozen clock: nothing moves), its state {@link
 * dev.infertop.model.RunState#REPLAY}; the MoE panel's counts (window and run) come from the
 * summary's moe object, other backends' ops from its backends object, the roofline panel's figures from its
 * roofline object; thread lanes come from trace.json's last seconds;
 * tensor groups are not in a snapshot.
 */
public final class SummarySnapshot {
    private SummarySnapshot() {}

    public static Snapshot of(SnapshotDirectory directory) {
        JsonNode s = directory.summary();
        JsonNode meta = s.path(JsonSchema.SNAPSHOT.key()).path(JsonSchema.SnapshotField.TARGET.key());
        List<String> libraries = new ArrayList<>();
        meta.path(JsonSchema.SnapshotTargetField.LIBRARIES.key()).forEach(l -> libraries.add(l.path(JsonSchema.FileIdentityField.PATH.key()).asText()));
        TargetInfo target = new TargetInfo(s.path(JsonSchema.PID.key()).asInt(), s.path(JsonSchema.COMMAND.key()).asText(),
                s.hasNonNull(JsonSchema.MODEL.key()) ? s.path(JsonSchema.MODEL.key()).asText() : null, libraries);
        long spanNs = Math.round(s.path(JsonSchema.SPAN_S.key()).asDouble() * 1e9);
        TokenTotals tokens = new TokenTotals(s.path(JsonSchema.DECODE_CALLS.key()).asLong(), s.path(JsonSchema.PREFILL_CALLS.key()).asLong(),
                s.path(JsonSchema.DECODE_STEP_CALLS.key()).asLong(), s.path(JsonSchema.FAILED_CALLS.key()).asLong(),
                s.path(JsonSchema.TOKENS_PREFILL.key()).asLong(), s.path(JsonSchema.TOKENS_DECODE.key()).asLong(),
                busyNs(s.path(JsonSchema.TOKENS_PREFILL.key()).asLong(), s.path(JsonSchema.PREFILL_TOKENS_PER_S.key()).asDouble()),
                busyNs(s.path(JsonSchema.TOKENS_DECODE.key()).asLong(), s.path(JsonSchema.DECODE_TOKENS_PER_S.key()).asDouble()),
                s.path(JsonSchema.CONTEXTS.key()).asInt(), 0, 0, 0, List.of(), List.of(), SpeculativeTotals.EMPTY,
                // A summary from before encoder passes were counted has neither key: none, as the run had.
                s.path(JsonSchema.ENCODE_CALLS.key()).asLong(0), s.path(JsonSchema.ENCODE_TOKENS.key()).asLong(0));
        LatencySummary ttft = latency(s.path(JsonSchema.TTFT_MS.key()));
        LatencySummary tpot = latency(s.path(JsonSchema.TPOT_MS.key()));
        List<BackendTotals> backends = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path(JsonSchema.GRAPH_COMPUTES.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            backends.add(new BackendTotals(entry.getKey(), entry.getValue().asLong(),
                    s.path(JsonSchema.GRAPH_NODES.key()).path(entry.getKey()).asLong(),
                    Math.round(s.path(JsonSchema.GRAPH_BUSY_MS.key()).path(entry.getKey()).asDouble() * 1e6)));
        }
        BackendTotals cpu = new BackendTotals("CPU", s.path(JsonSchema.CPU_GRAPH_COMPUTES.key()).asLong(),
                s.path(JsonSchema.CPU_GRAPH_NODES.key()).asLong(), Math.round(s.path(JsonSchema.CPU_GRAPH_BUSY_MS.key()).asDouble() * 1e6));
        List<OpTotals> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path(JsonSchema.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            Histogram histogram = directory.opTotal(entry.getKey());
            LatencySummary wall = new LatencySummary(op.path(JsonSchema.OpField.GROUPS.key()).asLong(), op.path(JsonSchema.OpField.P50_MS.key()).asDouble(),
                    op.path(JsonSchema.OpField.P90_MS.key()).asDouble(), op.path(JsonSchema.OpField.P99_MS.key()).asDouble(), op.path(JsonSchema.OpField.MAX_MS.key()).asDouble(),
                    histogram == null ? 0 : histogram.getMean() / 1e6);
            ops.add(new OpTotals(entry.getKey(), op.path(JsonSchema.OpField.GROUPS.key()).asLong(), op.path(JsonSchema.OpField.NODES.key()).asLong(),
                    ms(op.path(JsonSchema.OpField.WALL_MS.key())), ms(op.path(JsonSchema.OpField.WORK_MS.key())), ms(op.path(JsonSchema.OpField.BARRIER_WAIT_MS.key())), wall,
                    op.path(JsonSchema.OpField.LAST_SHAPE.key()).asText(), LatencyDistribution.ofNanos(histogram)));
        }
        List<ThreadTotals> threads = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path(JsonSchema.THREADS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode thread = entry.getValue();
            OptionalInt tid = NumberKeys.tid(entry.getKey());
            if (tid.isEmpty()) {
                continue;
            }
            threads.add(new ThreadTotals(tid.getAsInt(), thread.path(JsonSchema.ThreadField.GROUPS.key()).asLong(),
                    ms(thread.path(JsonSchema.ThreadField.WORK_MS.key())), ms(thread.path(JsonSchema.ThreadField.BARRIER_WAIT_MS.key())), thread.path(JsonSchema.ThreadField.CPU.key()).asInt(),
                    thread.path(JsonSchema.ThreadField.MIGRATIONS.key()).asLong()));
        }
        OperatorTotals operators = new OperatorTotals(ops, threads, s.path(JsonSchema.OP_GRAPHS.key()).asLong(),
                s.path(JsonSchema.OP_GRAPHS_UNATTRIBUTED.key()).asLong(), List.of(), directory.lanes());
        List<LayerStatus> layers = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path(JsonSchema.LAYERS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            Layer layer;
            try {
                layer = Layer.parse(entry.getKey());
            } catch (IllegalArgumentException unknown) {
                continue; // a layer this build does not know (a newer infertop's snapshot)
            }
            LayerStatus.State state;
            try {
                state = LayerStatus.State.valueOf(entry.getValue().path(JsonSchema.LayerField.STATE.key()).asText().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException unknown) {
                state = LayerStatus.State.UNAVAILABLE;
            }
            List<String> probes = new ArrayList<>();
            entry.getValue().path(JsonSchema.LayerField.PROBES.key()).forEach(p -> probes.add(p.asText()));
            layers.add(new LayerStatus(layer, state, entry.getValue().path(JsonSchema.LayerField.REASON.key()).asText(""), probes));
        }
        Figures run = new Figures(spanNs, tokens, ttft, tpot, backends, cpu, operators, DeepLayerSummary.sched(s),
                DeepLayerSummary.counters(s), backendOps(s), RooflineSummary.totals(s), OffloadSummary.totals(s),
                WhisperTotals.EMPTY);
        return new Snapshot(s.path(JsonSchema.SEQ.key()).asLong(), RunState.REPLAY, target, run, run, s.path(JsonSchema.LOST_EVENTS.key()).asLong(),
                layers, MoeSummary.totals(s)).withBudget(budget(s));
    }

    /**
     * The overhead budget as the run last saw it (summary.json's {@code budget}), so that a replay's header shows
     * the estimate the summary's {@code probe_overhead_cpu_fraction_est} holds; {@link BudgetStatus#NONE} where
     * the summary has none. The file is someone else's: a figure that is not a finite, non-negative number is
     * left out (the estimate then counts as not measured), the words are sanitised.
     */
    static BudgetStatus budget(JsonNode s) {
        JsonNode b = s.path(JsonSchema.BUDGET.key());
        String sampling = b.path(JsonSchema.BudgetField.SAMPLING.key()).isTextual() ? SafeText.of(b.path(JsonSchema.BudgetField.SAMPLING.key()).asText()) : "";
        if (!b.isObject() || sampling.isEmpty()) {
            return BudgetStatus.NONE;
        }
        double limit = nonNegativeOrNaN(b.path(JsonSchema.BudgetField.LIMIT_PERCENT.key()));
        double share = nonNegativeOrNaN(b.path(JsonSchema.BudgetField.ARRIVAL_SHARE.key()));
        double windowS = nonNegativeOrNaN(b.path(JsonSchema.BudgetField.WINDOW_S.key()));
        return new BudgetStatus(Double.isNaN(limit) ? 0 : limit, nonNegativeOrNaN(b.path(JsonSchema.BudgetField.ESTIMATE_PERCENT.key())),
                nonNegativeOrNaN(b.path(JsonSchema.BudgetField.FULL_TRACING_PERCENT.key())), Double.isNaN(share) ? 1 : Math.min(1, share), sampling,
                Double.isNaN(windowS) || windowS <= 0 ? BudgetStatus.BUDGET_WINDOW_S : windowS);
    }

    /** A finite, non-negative number, else NaN. */
    private static double nonNegativeOrNaN(JsonNode value) {
        double d = value.isNumber() ? value.asDouble() : Double.NaN;
        return Double.isFinite(d) && d >= 0 ? d : Double.NaN;
    }

    /**
     * The ops of backends other than the CPU from summary.json's backends object (the CPU's come from the
     * operator layer's ops): an op with {@code ms} was timed, one without was only counted.
     */
    static List<BackendOps> backendOps(JsonNode s) {
        List<BackendOps> result = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path(JsonSchema.BACKENDS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            if (entry.getKey().equals(BackendBreakdown.CPU)) {
                continue;
            }
            JsonNode backend = entry.getValue();
            List<BackendOps.Op> ops = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> o = backend.path(JsonSchema.BackendField.OPS.key()).fields(); o.hasNext(); ) {
                Map.Entry<String, JsonNode> op = o.next();
                ops.add(new BackendOps.Op(op.getKey(), op.getValue().path(JsonSchema.BackendOpField.NODES.key()).asLong(),
                        ms(op.getValue().path(JsonSchema.BackendOpField.MS.key())), op.getValue().has(JsonSchema.BackendOpField.MS.key())));
            }
            result.add(new BackendOps(entry.getKey(), backend.path(JsonSchema.BackendField.GRAPHS.key()).asLong(),
                    ms(backend.path(JsonSchema.BackendField.BUSY_MS.key())), ops,
                    dispatch(backend.path(JsonSchema.BackendField.DISPATCH.key()))));
        }
        return result;
    }

    /** A backend's node-by-node dispatch, or null where summary.json has none. */
    private static BackendOps.NodeDispatch dispatch(JsonNode dispatch) {
        if (!dispatch.isObject()) {
            return null;
        }
        List<BackendOps.OpDispatch> byOp = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> o = dispatch.path(JsonSchema.BackendDispatchField.OPS.key()).fields();
             o.hasNext(); ) {
            Map.Entry<String, JsonNode> op = o.next();
            long calls = op.getValue().path(JsonSchema.BackendDispatchOpField.CALLS.key()).asLong();
            // a view's calls dispatch nothing: summary.json writes its dispatches as 0
            byOp.add(new BackendOps.OpDispatch(op.getKey(), calls,
                    op.getValue().path(JsonSchema.BackendDispatchOpField.FUSED.key()).asLong(),
                    calls > 0 && op.getValue().path(JsonSchema.BackendDispatchOpField.DISPATCHES.key()).asLong() == 0));
        }
        return new BackendOps.NodeDispatch(dispatch.path(JsonSchema.BackendDispatchField.GRAPHS.key()).asLong(), byOp);
    }

    /**
     * Busy time back from tokens and tokens/s (summary.json keeps the rate): the busy time that gives back at least the summary's rate: rounded down, so a rate written as 1994.05 reads
     * back as 1994.0500001, not 1994.0499999, and the replay shows the one decimal the summary rounds to.
     */
    static long busyNs(long tokens, double perSecond) {
        return perSecond <= 0 ? 0 : (long) Math.floor(tokens / perSecond * 1e9);
    }

    private static long ms(JsonNode node) {
        return Math.round(node.asDouble() * 1e6);
    }

    private static LatencySummary latency(JsonNode node) {
        return new LatencySummary(node.path(JsonSchema.LatencyField.COUNT.key()).asLong(), node.path(JsonSchema.LatencyField.P50.key()).asDouble(),
                node.path(JsonSchema.LatencyField.P90.key()).asDouble(), node.path(JsonSchema.LatencyField.P99.key()).asDouble(), node.path(JsonSchema.LatencyField.MAX.key()).asDouble(),
                node.path(JsonSchema.LatencyField.MEAN.key()).asDouble());
    }
}
