package dev.infertop.snapshot;

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
        JsonNode meta = s.path("snapshot").path("target");
        List<String> libraries = new ArrayList<>();
        meta.path("libraries").forEach(l -> libraries.add(l.path("path").asText()));
        TargetInfo target = new TargetInfo(s.path("pid").asInt(), s.path("command").asText(),
                s.hasNonNull("model") ? s.path("model").asText() : null, libraries);
        long spanNs = Math.round(s.path("span_s").asDouble() * 1e9);
        TokenTotals tokens = new TokenTotals(s.path("decode_calls").asLong(), s.path("prefill_calls").asLong(),
                s.path("decode_step_calls").asLong(), s.path("failed_calls").asLong(),
                s.path("tokens_prefill").asLong(), s.path("tokens_decode").asLong(),
                busyNs(s.path("tokens_prefill").asLong(), s.path("prefill_tokens_per_s").asDouble()),
                busyNs(s.path("tokens_decode").asLong(), s.path("decode_tokens_per_s").asDouble()),
                s.path("contexts").asInt(), 0, 0, 0, List.of(), List.of(), SpeculativeTotals.EMPTY,
                // A summary from before encoder passes were counted has neither key: none, as the run had.
                s.path("encode_calls").asLong(0), s.path("encode_tokens").asLong(0));
        LatencySummary ttft = latency(s.path("ttft_ms"));
        LatencySummary tpot = latency(s.path("tpot_ms"));
        List<BackendTotals> backends = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path("graph_computes").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            backends.add(new BackendTotals(entry.getKey(), entry.getValue().asLong(),
                    s.path("graph_nodes").path(entry.getKey()).asLong(),
                    Math.round(s.path("graph_busy_ms").path(entry.getKey()).asDouble() * 1e6)));
        }
        BackendTotals cpu = new BackendTotals("CPU", s.path("cpu_graph_computes").asLong(),
                s.path("cpu_graph_nodes").asLong(), Math.round(s.path("cpu_graph_busy_ms").asDouble() * 1e6));
        List<OpTotals> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode op = entry.getValue();
            Histogram histogram = directory.opTotal(entry.getKey());
            LatencySummary wall = new LatencySummary(op.path("groups").asLong(), op.path("p50_ms").asDouble(),
                    op.path("p90_ms").asDouble(), op.path("p99_ms").asDouble(), op.path("max_ms").asDouble(),
                    histogram == null ? 0 : histogram.getMean() / 1e6);
            ops.add(new OpTotals(entry.getKey(), op.path("groups").asLong(), op.path("nodes").asLong(),
                    ms(op.path("wall_ms")), ms(op.path("work_ms")), ms(op.path("barrier_wait_ms")), wall,
                    op.path("last_shape").asText(), LatencyDistribution.ofNanos(histogram)));
        }
        List<ThreadTotals> threads = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path("threads").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode thread = entry.getValue();
            OptionalInt tid = NumberKeys.tid(entry.getKey());
            if (tid.isEmpty()) {
                continue;
            }
            threads.add(new ThreadTotals(tid.getAsInt(), thread.path("groups").asLong(),
                    ms(thread.path("work_ms")), ms(thread.path("barrier_wait_ms")), thread.path("cpu").asInt(),
                    thread.path("migrations").asLong()));
        }
        OperatorTotals operators = new OperatorTotals(ops, threads, s.path("op_graphs").asLong(),
                s.path("op_graphs_unattributed").asLong(), List.of(), directory.lanes());
        List<LayerStatus> layers = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path("layers").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            Layer layer;
            try {
                layer = Layer.parse(entry.getKey());
            } catch (IllegalArgumentException unknown) {
                continue; // a layer this build does not know (a newer infertop's snapshot)
            }
            LayerStatus.State state;
            try {
                state = LayerStatus.State.valueOf(entry.getValue().path("state").asText().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException unknown) {
                state = LayerStatus.State.UNAVAILABLE;
            }
            List<String> probes = new ArrayList<>();
            entry.getValue().path("probes").forEach(p -> probes.add(p.asText()));
            layers.add(new LayerStatus(layer, state, entry.getValue().path("reason").asText(""), probes));
        }
        Figures run = new Figures(spanNs, tokens, ttft, tpot, backends, cpu, operators, DeepLayerSummary.sched(s),
                DeepLayerSummary.counters(s), backendOps(s), RooflineSummary.totals(s));
        return new Snapshot(s.path("seq").asLong(), RunState.REPLAY, target, run, run, s.path("lost_events").asLong(),
                layers, MoeSummary.totals(s)).withBudget(budget(s));
    }

    /**
     * The overhead budget as the run last saw it (summary.json's {@code budget}), so that a replay's header shows
     * the estimate the summary's {@code probe_overhead_cpu_fraction_est} holds; {@link BudgetStatus#NONE} where
     * the summary has none. The file is someone else's: a figure that is not a finite, non-negative number is
     * left out (the estimate then counts as not measured), the words are sanitised.
     */
    static BudgetStatus budget(JsonNode s) {
        JsonNode b = s.path("budget");
        String sampling = b.path("sampling").isTextual() ? SafeText.of(b.path("sampling").asText()) : "";
        if (!b.isObject() || sampling.isEmpty()) {
            return BudgetStatus.NONE;
        }
        double limit = nonNegativeOrNaN(b.path("limit_percent"));
        double share = nonNegativeOrNaN(b.path("arrival_share"));
        double windowS = nonNegativeOrNaN(b.path("window_s"));
        return new BudgetStatus(Double.isNaN(limit) ? 0 : limit, nonNegativeOrNaN(b.path("estimate_percent")),
                nonNegativeOrNaN(b.path("full_tracing_percent")), Double.isNaN(share) ? 1 : Math.min(1, share), sampling,
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
        for (Iterator<Map.Entry<String, JsonNode>> it = s.path("backends").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            if (entry.getKey().equals(BackendBreakdown.CPU)) {
                continue;
            }
            JsonNode backend = entry.getValue();
            List<BackendOps.Op> ops = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> o = backend.path("ops").fields(); o.hasNext(); ) {
                Map.Entry<String, JsonNode> op = o.next();
                ops.add(new BackendOps.Op(op.getKey(), op.getValue().path("nodes").asLong(),
                        ms(op.getValue().path("ms")), op.getValue().has("ms")));
            }
            result.add(new BackendOps(entry.getKey(), backend.path("graphs").asLong(), ms(backend.path("busy_ms")), ops));
        }
        return result;
    }

    /** Busy time back from tokens and tokens/s (summary.json keeps the rate): the same rate to its rounding. */
    /**
     * The busy time that gives back at least the summary's rate: rounded down, so a rate written as 1994.05 reads
     * back as 1994.0500001, not 1994.0499999, and the replay shows the one decimal the summary rounds to.
     */
    static long busyNs(long tokens, double perSecond) {
        return perSecond <= 0 ? 0 : (long) Math.floor(tokens / perSecond * 1e9);
    }

    private static long ms(JsonNode node) {
        return Math.round(node.asDouble() * 1e6);
    }

    private static LatencySummary latency(JsonNode node) {
        return new LatencySummary(node.path("count").asLong(), node.path("p50").asDouble(),
                node.path("p90").asDouble(), node.path("p99").asDouble(), node.path("max").asDouble(),
                node.path("mean").asDouble());
    }
}
