package dev.infertop.view;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.Figures;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.model.ThreadTotals;
import dev.infertop.model.TokenTotals;

import java.io.PrintStream;
import java.util.List;

import static dev.infertop.view.JsonSchema.*;

/**
 * One JSON object per line per interval, and a last one with {@code "final": true} holding the run's totals.
 * Field names are part of the CLI contract: man/infertop.1 documents each one.
 */
public final class JsonLinesView implements SnapshotView {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final PrintStream out;
    private final dev.infertop.ffi.PipeEnd stdoutPipe;

    public JsonLinesView(PrintStream out) {
        this.out = out;
        this.stdoutPipe = out == System.out ? dev.infertop.ffi.PipeEnd.standardOutput() : null;
    }

    @Override
    public void show(Snapshot snapshot) {
        out.println(toJson(snapshot));
        out.flush();
    }

    /**
     * PrintStream turns EPIPE into its error flag (the JVM ignores SIGPIPE): a closed pipe reads as true after a
     * write; on standard output, poll(2) tells it before the next one (the collector asks between intervals).
     */
    @Override
    public boolean outputClosed() {
        return out.checkError() || (stdoutPipe != null && stdoutPipe.readerGone());
    }

    public static String toJson(Snapshot s) {
        return SafeJson.line(toJsonNode(s, s.isFinal()));
    }

    /** The JSON object of {@code s}, of the run's totals when {@code total} (a snapshot's summary.json). */
    /** The collector's bounds, what it kept and what it dropped (run so far; man page: limits). */
    private static void putLimits(ObjectNode node, dev.infertop.model.Limits limits) {
        for (dev.infertop.model.Limits.Bound bound : limits.bounds()) {
            if (bound.keptField() != null) {
                node.put(bound.keptField(), bound.kept());
            }
            node.put(bound.capField(), bound.cap());
            for (dev.infertop.model.Limits.Past past : bound.past()) {
                node.put(past.field(), past.count());
            }
        }
    }

    /** The overhead budget (man page: budget): the limit, the estimates, what is sampled. */
    private static void putBudget(ObjectNode node, dev.infertop.model.BudgetStatus budget) {
        node.put("limit_percent", budget.budgetPercent());
        if (budget.measured()) {
            node.put("estimate_percent", round(budget.estimatePercent(), 3));
            node.put("full_tracing_percent", round(budget.fullTracingPercent(), 3));
        }
        node.put("arrival_share", round(budget.arrivalShare(), 4));
        node.put("window_s", round(budget.windowS(), 3));
        node.put("sampling", budget.sampling());
    }

    /**
     * Which figures come from the operator layer's sample windows, and the share of the time they cover (1:
     * every graph; 0: the layer off).
     */
    private static void putSampled(ObjectNode node, Snapshot s) {
        node.put("operator_sampled_ratio", round(dev.infertop.model.SampledFigures.operatorSampledRatio(s), 4));
        var figures = node.putArray("window_figures");
        dev.infertop.model.SampledFigures.WINDOW_FIGURES.forEach(figures::add);
    }

    public static ObjectNode toJsonNode(Snapshot s, boolean total) {
        ObjectNode root = MAPPER.createObjectNode();
        Figures f = s.figures(total);
        TokenTotals tokens = f.tokens();
        long spanNs = f.spanNs();
        LatencySummary tpot = f.tpot();
        root.put(FINAL.key(), s.isFinal());
        root.put(SEQ.key(), s.sequence());
        root.put(SCOPE.key(), total ? "total" : "interval");
        root.put(SPAN_S.key(), round(spanNs / 1e9, 3));
        root.put(PID.key(), s.target().pid());
        root.put(COMMAND.key(), s.target().command());
        if (s.target().modelFile() != null) {
            root.put(MODEL.key(), s.target().modelFile());
        }
        root.put(TARGET_STATE.key(), s.state().text());
        root.put(DECODE_CALLS.key(), tokens.decodeCalls());
        root.put(PREFILL_CALLS.key(), tokens.prefillCalls());
        root.put(DECODE_STEP_CALLS.key(), tokens.decodeStepCalls());
        root.put(FAILED_CALLS.key(), tokens.failedCalls());
        // An encoder-decoder model's encoder passes: apart from the decode calls and the token figures.
        root.put(ENCODE_CALLS.key(), tokens.encodeCalls());
        root.put(ENCODE_TOKENS.key(), tokens.encodeTokens());
        root.put(TOKENS_PREFILL.key(), tokens.tokensPrefill());
        root.put(TOKENS_DECODE.key(), tokens.tokensDecode());
        root.put(PREFILL_TOKENS_PER_S.key(), round(tokens.prefillTokensPerSecond(), 2));
        root.put(DECODE_TOKENS_PER_S.key(), round(tokens.decodeTokensPerSecond(), 2));
        root.put(DECODE_TOKENS_PER_S_P50.key(), round(tpot.medianTokensPerSecond(), 2));
        root.put(DECODE_THROUGHPUT_PER_S.key(), round(tokens.decodeThroughputPerSecond(spanNs), 2));
        root.put(CONTEXTS.key(), tokens.contexts());
        putLatency(root.putObject(TTFT_MS.key()), f.ttft());
        putLatency(root.putObject(TPOT_MS.key()), tpot);
        // Requests: sequences of batches read token by token (a server's slots); zero for llama-bench's batches.
        ObjectNode requests = root.putObject(REQUESTS.key());
        requests.put("count", tokens.requests());
        requests.put("active", tokens.activeRequests());
        putLatency(requests.putObject("ttft_ms"), f.ttft());
        putLatency(requests.putObject("tpot_ms"), tpot);
        requests.put("prompt_tokens", tokens.tokensPrefill());
        requests.put("generated_tokens", tokens.tokensDecode() + tokens.requests());
        requests.put("batches_unread", tokens.batchesUnread());
        putSpeculative(root.putObject(SPECULATIVE.key()), tokens.speculative());
        ObjectNode sizes = root.putObject(BATCH_SIZES.key()); // llama_decode calls by tokens per call
        for (int bucket = 0; bucket < tokens.batchSizes().size(); bucket++) {
            if (tokens.batchSizes().get(bucket) > 0) {
                sizes.put(TokenTotals.batchSizeLabel(bucket), tokens.batchSizes().get(bucket));
            }
        }
        List<BackendTotals> backends = f.backends();
        ObjectNode computes = root.putObject(GRAPH_COMPUTES.key());
        ObjectNode nodes = root.putObject(GRAPH_NODES.key());
        ObjectNode busy = root.putObject(GRAPH_BUSY_MS.key());
        for (BackendTotals backend : backends) {
            computes.put(backend.backend(), backend.computes());
            nodes.put(backend.backend(), backend.nodes());
            busy.put(backend.backend(), round(backend.busyNs() / 1e6, 3));
        }
        BackendTotals cpu = f.cpuGraphs();
        root.put(CPU_GRAPH_COMPUTES.key(), cpu.computes());
        root.put(CPU_GRAPH_NODES.key(), cpu.nodes());
        root.put(CPU_GRAPH_BUSY_MS.key(), round(cpu.busyNs() / 1e6, 3));
        OperatorTotals operators = f.operators();
        root.put(OP_GRAPHS.key(), operators.graphsAttributed());
        root.put(OP_GRAPHS_UNATTRIBUTED.key(), operators.graphsUnattributed());
        ObjectNode ops = root.putObject(OPS.key());
        for (OpTotals op : operators.ops()) {
            ObjectNode node = ops.putObject(op.op());
            node.put("groups", op.groups());
            node.put("nodes", op.nodes());
            node.put("wall_ms", round(op.wallNs() / 1e6, 3));
            node.put("work_ms", round(op.workNs() / 1e6, 3));
            node.put("barrier_wait_ms", round(op.waitNs() / 1e6, 3));
            node.put("p50_ms", round(op.wall().p50Ms(), 4));
            node.put("p90_ms", round(op.wall().p90Ms(), 4));
            node.put("p99_ms", round(op.wall().p99Ms(), 4));
            node.put("max_ms", round(op.wall().maxMs(), 4));
            node.put("last_shape", op.lastShape());
        }
        // Every graph's, where windows traced some (man page: sampled figures): traced plus the untraced graphs'
        // share, scaled from the run's windows; the same as "ops" with every graph traced.
        ObjectNode estimated = root.putObject(OPS_ESTIMATED.key());
        for (dev.infertop.model.OpEstimate op : operators.estimated()) {
            ObjectNode node = estimated.putObject(op.op());
            node.put("groups", round(op.groups(), 1));
            node.put("wall_ms", round(op.wallNs() / 1e6, 3));
        }
        putSampled(root.putObject(SAMPLED.key()), s);
        ObjectNode threads = root.putObject(THREADS.key());
        for (ThreadTotals thread : operators.threads()) {
            ObjectNode node = threads.putObject(dev.infertop.model.Other.tid(thread.tid()));
            node.put("groups", thread.groups());
            node.put("work_ms", round(thread.workNs() / 1e6, 3));
            node.put("barrier_wait_ms", round(thread.barrierWaitNs() / 1e6, 3));
            node.put("cpu", thread.lastCpu());
            node.put("migrations", thread.migrations());
        }
        if (!f.roofline().isEmpty()) {
            putRoofline(root.putObject(ROOFLINE.key()), f.roofline(), tokens);
        }
        SchedJson.put(root.putObject(SCHED.key()), s, f.sched(), spanNs);
        CountersJson.put(root, s);
        ObjectNode perBackend = root.putObject(BACKENDS.key());
        for (dev.infertop.model.BackendBreakdown backend : dev.infertop.model.BackendBreakdown.of(f)) {
            ObjectNode node = perBackend.putObject(backend.backend());
            node.put("graphs", backend.graphs());
            node.put("nodes", backend.nodes());
            node.put("busy_ms", round(backend.busyNs() / 1e6, 3));
            ObjectNode backendOps = node.putObject("ops");
            for (dev.infertop.model.BackendOps.Op op : backend.ops()) {
                ObjectNode opNode = backendOps.putObject(op.op());
                opNode.put("nodes", op.nodes());
                if (op.timed()) {
                    opNode.put("ms", round(op.timeNs() / 1e6, 3));
                }
            }
        }
        MoeJson.put(root, s.moe());
        root.put(LOST_EVENTS.key(), s.lostEvents());
        putLimits(root.putObject(LIMITS.key()), s.limits());
        if (s.budget().present()) {
            putBudget(root.putObject(BUDGET.key()), s.budget());
        }
        ObjectNode layers = root.putObject(LAYERS.key());
        for (LayerStatus layer : s.layers()) {
            ObjectNode node = layers.putObject(layer.layer().id());
            node.put("state", layer.state().label());
            if (!layer.reason().isEmpty()) {
                node.put("reason", layer.reason());
            }
            if (s.isFinal()) {
                var probes = node.putArray("probes");
                layer.probes().forEach(probes::add);
            }
        }
        return root;
    }

    /**
     * The roofline: per op with costed nodes its bytes, weight bytes, FLOPs and the wall time they took, the rates
     * and intensity, and, with the machine's ceilings, the share of each and the verdict; the weight bytes one
     * decode token streams (the chosen experts' among them) and the fastest decode the memory ceiling allows,
     * beside the decode rate measured over the same span (as decode_tokens_per_s); the nodes left out
     * (MUL_MAT_ID without its experts' ids among them).
     */
    private static void putRoofline(ObjectNode out, dev.infertop.model.RooflineTotals roofline, TokenTotals tokens) {
        dev.infertop.model.Roofline.Ceilings ceilings = roofline.ceilings();
        if (ceilings != null) {
            out.put("memory_ceiling_gb_per_s", round(ceilings.memoryBytesPerSecond() / 1e9, 2));
            out.put("compute_ceiling_gflop_per_s", round(ceilings.flopsPerSecond() / 1e9, 2));
            out.put("ridge_flop_per_byte", round(ceilings.ridgeFlopsPerByte(), 3));
        }
        out.put("decode_graphs", roofline.decodeGraphs());
        out.put("weight_bytes_per_decode_token", roofline.weightBytesPerDecodeToken());
        out.put("expert_weight_bytes_per_decode_token", roofline.expertWeightBytesPerDecodeToken());
        out.put("uncosted_nodes", roofline.uncostedNodes());
        out.put("unrouted_nodes", roofline.unroutedNodes());
        if (ceilings != null && roofline.weightBytesPerDecodeToken() > 0) {
            out.put("decode_bound_tokens_per_s", round(dev.infertop.model.Roofline.decodeBoundTokensPerSecond(
                    roofline.weightBytesPerDecodeToken(), ceilings), 2));
        }
        out.put("measured_decode_tokens_per_s", round(tokens.decodeTokensPerSecond(), 2));
        putDecodeSteps(out, roofline);
        ObjectNode ops = out.putObject("ops");
        for (dev.infertop.model.RooflineTotals.OpRoofline op : roofline.ops()) {
            ObjectNode node = ops.putObject(op.op());
            node.put("nodes", op.nodes());
            node.put("bytes", op.bytes());
            node.put("weight_bytes", op.weightBytes());
            node.put("flops", op.flops());
            node.put("wall_ms", round(op.wallNs() / 1e6, 3));
            double seconds = Math.max(op.wallNs(), 1) / 1e9;
            node.put("gb_per_s", round(op.bytes() / seconds / 1e9, 3));
            node.put("gflop_per_s", round(op.flops() / seconds / 1e9, 3));
            node.put("flop_per_byte", round(op.bytes() == 0 ? 0 : (double) op.flops() / op.bytes(), 3));
            if (ceilings != null) {
                dev.infertop.model.Roofline.Point point = op.point(ceilings);
                node.put("memory_share", round(point.memoryShare(), 3));
                node.put("compute_share", round(point.computeShare(), 3));
                node.put("verdict", point.bound().text());
            }
        }
    }

    /**
     * Decode steps of any batch size (man page: roofline): per batch size the step's weight and KV bytes, FLOPs and
     * tokens, per generated token, the intensity, and the decode bound beside the measured rate; where the ridge
     * point would be reached as slots fill, and where KV reads overtake the weights as contexts grow.
     */
    private static void putDecodeSteps(ObjectNode out, dev.infertop.model.RooflineTotals roofline) {
        dev.infertop.model.Roofline.Ceilings ceilings = roofline.ceilings();
        out.put("kv_bytes_per_position", roofline.kvBytesPerPosition());
        out.put("kv_overtakes_weights_at_positions", roofline.kvOvertakesWeightsAtPositions());
        out.put("positioned_tokens", roofline.positionedTokens());
        out.put("positioned_context_positions", roofline.positionedContextPositions());
        double ridgeBatch = roofline.ridgeBatchTokens();
        if (Double.isFinite(ridgeBatch)) {
            out.put("ridge_batch_tokens", round(ridgeBatch, 1));
        } else if (ridgeBatch == Double.POSITIVE_INFINITY) {
            out.put("ridge_batch_tokens", "never: KV reads keep it below the ridge");
        }
        ObjectNode steps = out.putObject("decode_steps");
        for (dev.infertop.model.DecodeSteps step : roofline.decodeSteps()) {
            ObjectNode node = steps.putObject(Integer.toString(step.batchTokens()));
            node.put("steps", step.steps());
            node.put("tokens", step.tokens());
            node.put("weight_bytes_per_step", Math.round(step.weightBytesPerStep()));
            node.put("kv_bytes_per_step", Math.round(step.kvBytesPerStep()));
            node.put("context_positions_per_step", round((double) step.contextPositions() / step.steps(), 1));
            node.put("flops_per_step", Math.round(step.flopsPerStep()));
            node.put("weight_bytes_per_token", Math.round((double) step.weightBytes() / step.tokens()));
            node.put("kv_bytes_per_token", Math.round((double) step.kvBytes() / step.tokens()));
            node.put("flop_per_byte", round(step.flopsPerByte(), 3));
            node.put("wall_ms", round(step.wallNs() / 1e6, 3));
            node.put("measured_tokens_per_s", round(step.measuredTokensPerSecond(), 2));
            if (ceilings != null) {
                node.put("bound_tokens_per_s", round(step.boundTokensPerSecond(ceilings), 2));
                node.put("verdict", dev.infertop.model.Roofline.point(step.weightBytes() + step.kvBytes(), step.flops(),
                        step.wallNs(), ceilings).bound().text());
            }
        }
    }

    /** Speculative decoding: the target's verification steps and the draft context's calls (zeros without). */
    private static void putSpeculative(ObjectNode out, dev.infertop.model.SpeculativeTotals spec) {
        out.put("verify_steps", spec.verifySteps());
        out.put("draft_tokens", spec.draftTokens());
        out.put("accepted_tokens", spec.acceptedTokens());
        double rate = spec.acceptanceRate();
        if (Double.isNaN(rate)) {
            out.putNull("acceptance_rate");
        } else {
            out.put("acceptance_rate", round(rate, 4));
        }
        out.put("unresolved_steps", spec.unresolvedSteps());
        out.put("draft_calls", spec.draftCalls());
        out.put("draft_tokens_decoded", spec.draftTokensDecoded());
        var positions = out.putArray("accepted_by_position");
        spec.acceptedByPosition().forEach(positions::add);
    }

    private static void putLatency(ObjectNode node, LatencySummary latency) {
        node.put("count", latency.count());
        node.put("p50", round(latency.p50Ms(), 4));
        node.put("p90", round(latency.p90Ms(), 4));
        node.put("p99", round(latency.p99Ms(), 4));
        node.put("max", round(latency.maxMs(), 4));
        node.put("mean", round(latency.meanMs(), 4));
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
