package dev.infertop.json;

import dev.infertop.ffi.PipeEnd;
import dev.infertop.model.BackendBreakdown;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.DecodeSteps;
import dev.infertop.model.ExpertsOnDevices;
import dev.infertop.model.GraphTokenCounts;
import dev.infertop.model.JsonSchema;
import dev.infertop.model.Limits;
import dev.infertop.model.OpEstimate;
import dev.infertop.model.OpSampleTotals;
import dev.infertop.model.Other;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.model.SampledFigures;
import dev.infertop.model.SpeculativeTotals;
import dev.infertop.model.TokenSource;
import dev.infertop.view.SnapshotView;
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
import dev.infertop.model.WhisperTotals;

import java.io.PrintStream;
import java.util.List;

import static dev.infertop.model.JsonSchema.*;

/**
 * One JSON object per line per interval, and a last one with {@code "final": true} holding the run's totals.
 * Field names are part of the CLI contract: man/infertop.1 documents each one.
 */
public final class JsonLinesView implements SnapshotView {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final PrintStream out;
    private final PipeEnd stdoutPipe;

    public JsonLinesView(PrintStream out) {
        this.out = out;
        this.stdoutPipe = out == System.out ? PipeEnd.standardOutput() : null;
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

    /** The collector's bounds, what it kept and what it dropped (run so far; man page: limits). */
    private static void putLimits(ObjectNode node, Limits limits) {
        for (Limits.Bound bound : limits.bounds()) {
            if (bound.keptField() != null) {
                node.put(bound.keptField(), bound.kept());
            }
            node.put(bound.capField(), bound.cap());
            for (Limits.Past past : bound.past()) {
                node.put(past.field(), past.count());
            }
        }
    }

    /** The overhead budget (man page: budget): the limit, the estimates, what is sampled. */
    private static void putBudget(ObjectNode node, BudgetStatus budget) {
        node.put(BudgetField.LIMIT_PERCENT.key(), budget.budgetPercent());
        if (budget.measured()) {
            node.put(BudgetField.ESTIMATE_PERCENT.key(), round(budget.estimatePercent(), 3));
            node.put(BudgetField.FULL_TRACING_PERCENT.key(), round(budget.fullTracingPercent(), 3));
        }
        node.put(BudgetField.ARRIVAL_SHARE.key(), round(budget.arrivalShare(), 4));
        node.put(BudgetField.WINDOW_S.key(), round(budget.windowS(), 3));
        node.put(BudgetField.SAMPLING.key(), budget.sampling());
    }

    /**
     * Which figures come from the operator layer's sample windows, and the share of the time they cover (1:
     * every graph; 0: the layer off).
     */
    private static void putSampled(ObjectNode node, Snapshot s) {
        node.put(SampledField.OPERATOR_SAMPLED_RATIO.key(), round(SampledFigures.operatorSampledRatio(s), 4));
        var figures = node.putArray(SampledField.WINDOW_FIGURES.key());
        SampledFigures.WINDOW_FIGURES.forEach(figures::add);
    }

    /** The JSON object of {@code s}, of the run's totals when {@code total} (a snapshot's summary.json). */
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
        // Which source the token figures below are from: the API's calls, or the graphs where it is not called.
        root.put(TOKEN_SOURCE.key(), WhisperTotals.tokenSource(s).word());
        root.put(TOKEN_STATE.key(), WhisperTotals.tokenSource(s).state());
        ObjectNode fromGraphs = root.putObject(GRAPH_TOKENS.key());
        fromGraphs.put(JsonSchema.GraphTokensField.GRAPHS.key(), tokens.fromGraphs().graphs());
        fromGraphs.put(JsonSchema.GraphTokensField.PROMPT_TOKENS.key(), tokens.fromGraphs().promptTokens());
        fromGraphs.put(JsonSchema.GraphTokensField.GENERATED_TOKENS.key(), tokens.fromGraphs().generatedTokens());
        if (tokens.fromGraphs().requestsKnown()) {
            fromGraphs.put(JsonSchema.GraphTokensField.REQUESTS.key(), tokens.fromGraphs().requests());
        } else {
            fromGraphs.putNull(JsonSchema.GraphTokensField.REQUESTS.key());
        }
        fromGraphs.put(JsonSchema.GraphTokensField.POSITIONS_READ.key(), tokens.fromGraphs().positionsRead());
        fromGraphs.put(JsonSchema.GraphTokensField.ENCODER_PASSES.key(), tokens.fromGraphs().encoderPasses());
        root.put(DECODE_CALLS.key(), tokens.decodeCalls());
        root.put(PREFILL_CALLS.key(), tokens.prefillCalls());
        root.put(DECODE_STEP_CALLS.key(), tokens.decodeStepCalls());
        root.put(FAILED_CALLS.key(), tokens.failedCalls());
        // An encoder-decoder model's encoder passes: apart from the decode calls and the token figures.
        root.put(ENCODE_CALLS.key(), tokens.encodeCalls());
        root.put(ENCODE_TOKENS.key(), tokens.encodeTokens());
        root.put(TOKENS_PREFILL.key(), tokens.tokensPrefill());
        root.put(TOKENS_DECODE.key(), tokens.tokensDecode());
        if (WhisperTotals.isWhisperOnly(s)) {
            // A whisper.cpp program makes no llama.cpp call: its rates are not zero, they do not apply ("whisper").
            root.putNull(PREFILL_TOKENS_PER_S.key());
            root.putNull(DECODE_TOKENS_PER_S.key());
            root.putNull(DECODE_TOKENS_PER_S_P50.key());
            root.putNull(DECODE_THROUGHPUT_PER_S.key());
        } else {
            root.put(PREFILL_TOKENS_PER_S.key(), round(tokens.prefillTokensPerSecond(), 2));
            root.put(DECODE_TOKENS_PER_S.key(), round(tokens.decodeTokensPerSecond(), 2));
            root.put(DECODE_TOKENS_PER_S_P50.key(), round(tpot.medianTokensPerSecond(), 2));
            root.put(DECODE_THROUGHPUT_PER_S.key(), round(tokens.decodeThroughputPerSecond(spanNs), 2));
        }
        root.put(CONTEXTS.key(), tokens.contexts());
        putLatency(root.putObject(TTFT_MS.key()), f.ttft());
        putLatency(root.putObject(TPOT_MS.key()), tpot);
        // Requests: sequences of batches read token by token (a server's slots); zero for llama-bench's batches.
        // From the graphs (the API not called): requests as the graphs tell them apart, one sequence at a time.
        GraphTokenCounts graphs = tokens.fromGraphs();
        boolean graphRequests = tokens.source() == TokenSource.GRAPHS && graphs.requestsKnown();
        long requestCount = graphRequests ? graphs.requests() : tokens.requests();
        ObjectNode requests = root.putObject(REQUESTS.key());
        requests.put(RequestsField.COUNT.key(), requestCount);
        requests.put(RequestsField.ACTIVE.key(), tokens.activeRequests());
        putLatency(requests.putObject(RequestsField.TTFT_MS.key()), graphRequests ? graphs.requestTtft() : f.ttft());
        putLatency(requests.putObject(RequestsField.TPOT_MS.key()), graphRequests ? graphs.requestTpot() : tpot);
        requests.put(RequestsField.PROMPT_TOKENS.key(), tokens.tokensPrefill());
        requests.put(RequestsField.GENERATED_TOKENS.key(), tokens.tokensDecode() + requestCount);
        requests.put(RequestsField.BATCHES_UNREAD.key(), tokens.batchesUnread());
        putSpeculative(root.putObject(SPECULATIVE.key()), tokens.speculative());
        if (WhisperTotals.isWhisperProgram(s)) {
            putWhisper(root.putObject(WHISPER.key()), f.whisper(), spanNs);
        }
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
            node.put(OpField.GROUPS.key(), op.groups());
            node.put(OpField.NODES.key(), op.nodes());
            node.put(OpField.WALL_MS.key(), round(op.wallNs() / 1e6, 3));
            node.put(OpField.WORK_MS.key(), round(op.workNs() / 1e6, 3));
            node.put(OpField.BARRIER_WAIT_MS.key(), round(op.waitNs() / 1e6, 3));
            node.put(OpField.P50_MS.key(), round(op.wall().p50Ms(), 4));
            node.put(OpField.P90_MS.key(), round(op.wall().p90Ms(), 4));
            node.put(OpField.P99_MS.key(), round(op.wall().p99Ms(), 4));
            node.put(OpField.MAX_MS.key(), round(op.wall().maxMs(), 4));
            node.put(OpField.LAST_SHAPE.key(), op.lastShape());
        }
        // Every graph's, where windows traced some (man page: sampled figures): traced plus the untraced graphs'
        // share, scaled from the run's windows; the same as "ops" with every graph traced.
        ObjectNode estimated = root.putObject(OPS_ESTIMATED.key());
        for (OpEstimate op : operators.estimated()) {
            ObjectNode node = estimated.putObject(op.op());
            node.put(OpField.GROUPS.key(), round(op.groups(), 1));
            node.put(OpField.WALL_MS.key(), round(op.wallNs() / 1e6, 3));
        }
        putOpsSampled(root.putObject(OPS_SAMPLED.key()), operators.sampled());
        putSampled(root.putObject(SAMPLED.key()), s);
        ObjectNode threads = root.putObject(THREADS.key());
        for (ThreadTotals thread : operators.threads()) {
            ObjectNode node = threads.putObject(Other.tid(thread.tid()));
            node.put(ThreadField.GROUPS.key(), thread.groups());
            node.put(ThreadField.WORK_MS.key(), round(thread.workNs() / 1e6, 3));
            node.put(ThreadField.BARRIER_WAIT_MS.key(), round(thread.barrierWaitNs() / 1e6, 3));
            node.put(ThreadField.CPU.key(), thread.lastCpu());
            node.put(ThreadField.MIGRATIONS.key(), thread.migrations());
        }
        if (!f.roofline().isEmpty()) {
            putRoofline(root.putObject(ROOFLINE.key()), f.roofline(), tokens);
        }
        SchedJson.put(root.putObject(SCHED.key()), s, f.sched(), spanNs);
        CountersJson.put(root, s);
        ObjectNode perBackend = root.putObject(BACKENDS.key());
        for (BackendBreakdown backend : BackendBreakdown.of(f)) {
            ObjectNode node = perBackend.putObject(backend.backend());
            node.put(BackendField.GRAPHS.key(), backend.graphs());
            node.put(BackendField.NODES.key(), backend.nodes());
            node.put(BackendField.BUSY_MS.key(), round(backend.busyNs() / 1e6, 3));
            ObjectNode backendOps = node.putObject(BackendField.OPS.key());
            for (BackendOps.Op op : backend.ops()) {
                ObjectNode opNode = backendOps.putObject(op.op());
                opNode.put(BackendOpField.NODES.key(), op.nodes());
                if (op.timed()) {
                    opNode.put(BackendOpField.MS.key(), round(op.timeNs() / 1e6, 3));
                }
            }
            if (backend.dispatch() != null) {
                putDispatch(node.putObject(BackendField.DISPATCH.key()), backend.dispatch());
            }
        }
        OffloadJson.put(root.putObject(OFFLOAD.key()), f.offload());
        MoeJson.put(root, s.moe(), ExpertsOnDevices.nodes(s.total()));
        root.put(LOST_EVENTS.key(), s.lostEvents());
        putLimits(root.putObject(LIMITS.key()), s.limits());
        if (s.budget().present()) {
            putBudget(root.putObject(BUDGET.key()), s.budget());
        }
        ObjectNode layers = root.putObject(LAYERS.key());
        for (LayerStatus layer : s.layers()) {
            ObjectNode node = layers.putObject(layer.layer().id());
            node.put(LayerField.STATE.key(), layer.state().label());
            if (!layer.reason().isEmpty()) {
                node.put(LayerField.REASON.key(), layer.reason());
            }
            if (s.isFinal()) {
                var probes = node.putArray(LayerField.PROBES.key());
                layer.probes().forEach(probes::add);
            }
        }
        return root;
    }

    /** A device backend's node-by-node host dispatch: per op, the nodes called for and the nodes fused. */
    private static void putDispatch(ObjectNode node, BackendOps.NodeDispatch dispatch) {
        node.put(BackendDispatchField.GRAPHS.key(), dispatch.graphs());
        node.put(BackendDispatchField.CALLS.key(), dispatch.calls());
        node.put(BackendDispatchField.DISPATCHES.key(), dispatch.dispatches());
        node.put(BackendDispatchField.FUSED_NODES.key(), dispatch.fusedNodes());
        ObjectNode ops = node.putObject(BackendDispatchField.OPS.key());
        for (BackendOps.OpDispatch op : dispatch.ops()) {
            ObjectNode opNode = ops.putObject(op.op());
            opNode.put(BackendDispatchOpField.CALLS.key(), op.calls());
            opNode.put(BackendDispatchOpField.DISPATCHES.key(), op.view() ? 0 : op.calls());
            opNode.put(BackendDispatchOpField.FUSED.key(), op.fused());
        }
    }

    /**
     * The roofline: per op with costed nodes its bytes, weight bytes, FLOPs and the wall time they took, the rates
     * and intensity, and, with the machine's ceilings, the share of each and the verdict; the weight bytes one
     * decode token streams (the chosen experts' among them) and the fastest decode the memory ceiling allows,
     * beside the decode rate measured over the same span (as decode_tokens_per_s); the nodes left out
     * (MUL_MAT_ID without its experts' ids among them).
     */
    private static void putRoofline(ObjectNode out, RooflineTotals roofline, TokenTotals tokens) {
        Roofline.Ceilings ceilings = roofline.ceilings();
        if (ceilings != null) {
            out.put(RooflineField.MEMORY_CEILING_GB_PER_S.key(), round(ceilings.memoryBytesPerSecond() / 1e9, 2));
            out.put(RooflineField.COMPUTE_CEILING_GFLOP_PER_S.key(), round(ceilings.flopsPerSecond() / 1e9, 2));
            out.put(RooflineField.RIDGE_FLOP_PER_BYTE.key(), round(ceilings.ridgeFlopsPerByte(), 3));
        }
        out.put(RooflineField.DECODE_GRAPHS.key(), roofline.decodeGraphs());
        out.put(RooflineField.WEIGHT_BYTES_PER_DECODE_TOKEN.key(), roofline.weightBytesPerDecodeToken());
        out.put(RooflineField.EXPERT_WEIGHT_BYTES_PER_DECODE_TOKEN.key(), roofline.expertWeightBytesPerDecodeToken());
        out.put(RooflineField.UNCOSTED_NODES.key(), roofline.uncostedNodes());
        out.put(RooflineField.UNROUTED_NODES.key(), roofline.unroutedNodes());
        if (ceilings != null && roofline.weightBytesPerDecodeToken() > 0) {
            out.put(RooflineField.DECODE_BOUND_TOKENS_PER_S.key(), round(Roofline.decodeBoundTokensPerSecond(
                    roofline.weightBytesPerDecodeToken(), ceilings), 2));
        }
        out.put(RooflineField.MEASURED_DECODE_TOKENS_PER_S.key(), round(tokens.decodeTokensPerSecond(), 2));
        putDecodeSteps(out, roofline);
        ObjectNode ops = out.putObject(RooflineField.OPS.key());
        for (RooflineTotals.OpRoofline op : roofline.ops()) {
            ObjectNode node = ops.putObject(op.op());
            node.put(RooflineOpField.NODES.key(), op.nodes());
            node.put(RooflineOpField.BYTES.key(), op.bytes());
            node.put(RooflineOpField.WEIGHT_BYTES.key(), op.weightBytes());
            node.put(RooflineOpField.FLOPS.key(), op.flops());
            node.put(RooflineOpField.WALL_MS.key(), round(op.wallNs() / 1e6, 3));
            double seconds = Math.max(op.wallNs(), 1) / 1e9;
            node.put(RooflineOpField.GB_PER_S.key(), round(op.bytes() / seconds / 1e9, 3));
            node.put(RooflineOpField.GFLOP_PER_S.key(), round(op.flops() / seconds / 1e9, 3));
            node.put(RooflineOpField.FLOP_PER_BYTE.key(), round(op.bytes() == 0 ? 0 : (double) op.flops() / op.bytes(), 3));
            if (ceilings != null) {
                Roofline.Point point = op.point(ceilings);
                node.put(RooflineOpField.MEMORY_SHARE.key(), round(point.memoryShare(), 3));
                node.put(RooflineOpField.COMPUTE_SHARE.key(), round(point.computeShare(), 3));
                node.put(RooflineOpField.VERDICT.key(), point.bound().text());
            }
        }
    }

    /**
     * Decode steps of any batch size (man page: roofline): per batch size the step's weight and KV bytes, FLOPs and
     * tokens, per generated token, the intensity, and the decode bound beside the measured rate; where the ridge
     * point would be reached as slots fill, and where KV reads overtake the weights as contexts grow.
     */
    private static void putDecodeSteps(ObjectNode out, RooflineTotals roofline) {
        Roofline.Ceilings ceilings = roofline.ceilings();
        out.put(RooflineField.KV_BYTES_PER_POSITION.key(), roofline.kvBytesPerPosition());
        out.put(RooflineField.KV_OVERTAKES_WEIGHTS_AT_POSITIONS.key(), roofline.kvOvertakesWeightsAtPositions());
        out.put(RooflineField.POSITIONED_TOKENS.key(), roofline.positionedTokens());
        out.put(RooflineField.POSITIONED_CONTEXT_POSITIONS.key(), roofline.positionedContextPositions());
        double ridgeBatch = roofline.ridgeBatchTokens();
        if (Double.isFinite(ridgeBatch)) {
            out.put(RooflineField.RIDGE_BATCH_TOKENS.key(), round(ridgeBatch, 1));
        } else if (ridgeBatch == Double.POSITIVE_INFINITY) {
            out.put(RooflineField.RIDGE_BATCH_TOKENS.key(), "never: KV reads keep it below the ridge");
        }
        ObjectNode steps = out.putObject(RooflineField.DECODE_STEPS.key());
        for (DecodeSteps step : roofline.decodeSteps()) {
            ObjectNode node = steps.putObject(Integer.toString(step.batchTokens()));
            node.put(DecodeStepField.STEPS.key(), step.steps());
            node.put(DecodeStepField.TOKENS.key(), step.tokens());
            node.put(DecodeStepField.WEIGHT_BYTES_PER_STEP.key(), Math.round(step.weightBytesPerStep()));
            node.put(DecodeStepField.KV_BYTES_PER_STEP.key(), Math.round(step.kvBytesPerStep()));
            node.put(DecodeStepField.CONTEXT_POSITIONS_PER_STEP.key(), round((double) step.contextPositions() / step.steps(), 1));
            node.put(DecodeStepField.FLOPS_PER_STEP.key(), Math.round(step.flopsPerStep()));
            node.put(DecodeStepField.WEIGHT_BYTES_PER_TOKEN.key(), Math.round((double) step.weightBytes() / step.tokens()));
            node.put(DecodeStepField.KV_BYTES_PER_TOKEN.key(), Math.round((double) step.kvBytes() / step.tokens()));
            node.put(DecodeStepField.FLOP_PER_BYTE.key(), round(step.flopsPerByte(), 3));
            node.put(DecodeStepField.WALL_MS.key(), round(step.wallNs() / 1e6, 3));
            node.put(DecodeStepField.MEASURED_TOKENS_PER_S.key(), round(step.measuredTokensPerSecond(), 2));
            if (ceilings != null) {
                node.put(DecodeStepField.BOUND_TOKENS_PER_S.key(), round(step.boundTokensPerSecond(ceilings), 2));
                node.put(DecodeStepField.VERDICT.key(), Roofline.point(step.weightBytes() + step.kvBytes(), step.flops(),
                        step.wallNs(), ceilings).bound().text());
            }
        }
    }

    /** whisper.cpp's units; a rate with nothing to divide is null ("unknown"), never 0. */
    static void putWhisper(ObjectNode node, WhisperTotals w, long spanNs) {
        node.put(WhisperField.TRANSCRIPTIONS.key(), w.transcriptions());
        node.put(WhisperField.FAILED_TRANSCRIPTIONS.key(), w.failedTranscriptions());
        node.put(WhisperField.AUDIO_S.key(), round(w.audioSeconds(), 3));
        node.put(WhisperField.SAMPLES_UNKNOWN.key(), w.samplesUnknown());
        node.put(WhisperField.TRANSCRIBING_S.key(), round(w.transcribingNs() / 1e9, 3));
        putRate(node, WhisperField.REAL_TIME_FACTOR.key(), w.realTimeFactor());
        node.put(WhisperField.ENCODER_PASSES.key(), w.encoderPasses());
        node.put(WhisperField.DECODER_CALLS.key(), w.decoderCalls());
        node.put(WhisperField.DECODER_TOKENS.key(), w.decoderTokens());
        putRate(node, WhisperField.DECODER_TOKENS_PER_S.key(), w.decoderTokensPerSecond(spanNs));
    }

    private static void putRate(ObjectNode node, String key, double value) {
        if (Double.isNaN(value)) {
            node.putNull(key);
        } else {
            node.put(key, round(value, 3));
        }
    }

    /** Speculative decoding: the target's verification steps and the draft context's calls (zeros without). */
    private static void putSpeculative(ObjectNode out, SpeculativeTotals spec) {
        out.put(SpeculativeField.VERIFY_STEPS.key(), spec.verifySteps());
        out.put(SpeculativeField.DRAFT_TOKENS.key(), spec.draftTokens());
        out.put(SpeculativeField.ACCEPTED_TOKENS.key(), spec.acceptedTokens());
        double rate = spec.acceptanceRate();
        if (Double.isNaN(rate)) {
            out.putNull(SpeculativeField.ACCEPTANCE_RATE.key());
        } else {
            out.put(SpeculativeField.ACCEPTANCE_RATE.key(), round(rate, 4));
        }
        out.put(SpeculativeField.UNRESOLVED_STEPS.key(), spec.unresolvedSteps());
        out.put(SpeculativeField.DRAFT_CALLS.key(), spec.draftCalls());
        out.put(SpeculativeField.DRAFT_TOKENS_DECODED.key(), spec.draftTokensDecoded());
        var positions = out.putArray(SpeculativeField.ACCEPTED_BY_POSITION.key());
        spec.acceptedByPosition().forEach(positions::add);
    }

    private static void putLatency(ObjectNode node, LatencySummary latency) {
        node.put(LatencyField.COUNT.key(), latency.count());
        node.put(LatencyField.P50.key(), round(latency.p50Ms(), 4));
        node.put(LatencyField.P90.key(), round(latency.p90Ms(), 4));
        node.put(LatencyField.P99.key(), round(latency.p99Ms(), 4));
        node.put(LatencyField.MAX.key(), round(latency.maxMs(), 4));
        node.put(LatencyField.MEAN.key(), round(latency.meanMs(), 4));
    }

    private static double round(double value, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }

    /** The clock samples: counts rounded to a tenth (a code line seen in two ops splits its samples). */
    private static void putOpsSampled(ObjectNode node, OpSampleTotals sampled) {
        node.put(OpsSampledField.PERIOD_MS.key(), round(sampled.periodNs() / 1e6, 3));
        node.put(OpsSampledField.SAMPLES.key(), sampled.samples());
        node.put(OpsSampledField.UNKNOWN.key(), round(sampled.unknown(), 1));
        node.put(OpsSampledField.BARRIER_WAIT.key(), round(sampled.barrierWait(), 1));
        node.put(OpsSampledField.OUTSIDE_GRAPHS.key(), round(sampled.outsideGraphs(), 1));
        node.put(OpsSampledField.LEARNED_SAMPLES.key(), sampled.learnedSamples());
        node.put(OpsSampledField.LEARNED_LINES.key(), sampled.learnedLines());
        putSampledOps(node.putObject(OpsSampledField.OPS.key()), sampled.ops());
        ObjectNode threads = node.putObject(OpsSampledField.THREADS.key());
        for (OpSampleTotals.Thread thread : sampled.threads()) {
            ObjectNode t = threads.putObject(Integer.toString(thread.tid()));
            t.put(SampledThreadField.SAMPLES.key(), thread.samples());
            t.put(SampledThreadField.OP.key(), thread.op());
        }
        ObjectNode between = node.putObject(OpsSampledField.BETWEEN_WINDOWS.key());
        between.put(SampledBetweenField.SAMPLES.key(), sampled.between().samples());
        between.put(SampledBetweenField.UNKNOWN.key(), round(sampled.between().unknown(), 1));
        putSampledOps(between.putObject(SampledBetweenField.OPS.key()), sampled.between().ops());
    }

    private static void putSampledOps(ObjectNode node, List<OpSampleTotals.Op> ops) {
        for (OpSampleTotals.Op op : ops) {
            ObjectNode o = node.putObject(op.op());
            o.put(SampledOpField.SAMPLES.key(), round(op.samples(), 1));
            o.put(SampledOpField.SHARE.key(), round(op.share(), 4));
        }
    }

}
