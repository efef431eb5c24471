package dev.infertop.metrics;

import dev.infertop.model.BackendOps;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.OpEstimate;
import dev.infertop.model.OpSampleTotals;
import dev.infertop.model.SampledFigures;
import dev.infertop.model.WhisperTotals;
import dev.infertop.model.HistogramTag;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Other;
import dev.infertop.model.OverheadEstimate;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.ThreadTotals;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A frame as Prometheus metrics (man/infertop.1, PROMETHEUS METRICS, lists each one). Counters are the run's
 * cumulative totals (the snapshot's {@code total*} fields), histograms the run's HdrHistograms counted into
 * fixed buckets; both start when infertop attached to the target ({@code _created}). Labels are few and
 * bounded (op type, backend, thread id, MoE layer and expert: each by the collector's caps, JSON {@code limits},
 * with what is past a cap under the label value {@code other}); tensor names are never labels. Every label
 * value that comes from the target is sanitised ({@link LabelValues}).
 */
public final class MetricsMapping {
    private MetricsMapping() {}

    /** The backend the operator layer's op times are measured on: it walks CPU graphs. */
    static final String OPERATOR_BACKEND = "CPU";

    /** Nothing traced yet (waiting for a process to follow): no metric, an empty exposition. */
    public static MetricSnapshots snapshots(MetricsFrame frame) {
        if (frame == null) {
            return MetricSnapshots.of();
        }
        Snapshot s = frame.snapshot();
        long created = frame.attachedEpochMs();
        MetricSnapshots.Builder out = MetricSnapshots.builder();

        out.metricSnapshot(InfoSnapshot.builder().name("infertop_target")
                .help("The traced process: pid, command, model file, llama.cpp build (GNU build-id of libllama)")
                .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder().labels(Labels.of(
                        "pid", Integer.toString(s.target().pid()),
                        "command", LabelValues.sanitize(s.target().command()),
                        "model", LabelValues.sanitize(s.target().modelFile()),
                        "llama_cpp_build", LabelValues.sanitize(frame.llamaCppBuild()))).build())
                .build());
        out.metricSnapshot(gauge("infertop_target_running", null,
                "1 while the target runs and is traced, 0 once it has exited", s.state() == RunState.RUNNING ? 1 : 0));

        // Which source the token counters below have (api, graphs, none): one series, value 1.
        out.metricSnapshot(InfoSnapshot.builder().name("infertop_token_source")
                .help("Where the token figures come from: api (llama_decode/llama_process calls), graphs (the "
                        + "graphs' token embedding: llama_decode is not called, inlined or not used), none, whisper.cpp (a whisper.cpp "
                        + "program: infertop_whisper_*)")
                .dataPoint(InfoSnapshot.InfoDataPointSnapshot.builder().labels(Labels.of(
                        "source", WhisperTotals.tokenSource(s).word())).build())
                .build());
        out.metricSnapshot(counter("infertop_graph_prefill_tokens", null,
                "Prompt tokens the graphs computed (their token embedding), whatever the token source",
                created, Map.of(Labels.EMPTY, (double) s.total().tokens().fromGraphs().promptTokens())));
        out.metricSnapshot(counter("infertop_graph_decode_tokens", null,
                "Generated tokens the graphs computed, whatever the token source",
                created, Map.of(Labels.EMPTY, (double) s.total().tokens().fromGraphs().generatedTokens())));
        out.metricSnapshot(counter("infertop_prefill_tokens", null, "Prompt tokens decoded (prefill)",
                created, Map.of(Labels.EMPTY, (double) s.total().tokens().tokensPrefill())));
        out.metricSnapshot(counter("infertop_decode_tokens", null, "Generated tokens decoded (decode steps)",
                created, Map.of(Labels.EMPTY, (double) s.total().tokens().tokensDecode())));
        out.metricSnapshot(counter("infertop_decode_calls", null, "llama_decode calls, prefill and decode",
                created, Map.of(Labels.EMPTY, (double) s.total().tokens().decodeCalls())));
        out.metricSnapshot(counter("infertop_encode_calls", null,
                "llama_process(ENCODE) calls: an encoder-decoder model's encoder passes, not in the decode figures",
                created, Map.of(Labels.EMPTY, (double) s.total().tokens().encodeCalls())));
        out.metricSnapshot(counter("infertop_encode_tokens", null, "Tokens of the encoder passes (encoder input)",
                created, Map.of(Labels.EMPTY, (double) s.total().tokens().encodeTokens())));

        if (WhisperTotals.isWhisperProgram(s)) {
            whisper(out, s.total().whisper(), created);
        }

        Map<Labels, Double> computes = new LinkedHashMap<>();
        Map<Labels, Double> busy = new LinkedHashMap<>();
        for (BackendTotals backend : s.total().backends()) {
            Labels labels = Labels.of("backend", LabelValues.sanitize(backend.backend()));
            computes.merge(labels, (double) backend.computes(), Double::sum);
            busy.merge(labels, backend.busyNs() / 1e9, Double::sum);
        }
        out.metricSnapshot(counter("infertop_graph_computes", null, "Graph computes per backend", created, computes));
        out.metricSnapshot(counter("infertop_graph_busy_seconds", Unit.SECONDS,
                "Time spent computing graphs per backend", created, busy));

        offload(out, s.total().offload(), created);
        nodeDispatch(out, s.total().backendOps(), created);

        Map<Labels, Double> wait = new LinkedHashMap<>();
        Map<Labels, Double> work = new LinkedHashMap<>();
        for (ThreadTotals thread : s.total().operators().threads()) {
            Labels labels = Labels.of("thread", Other.tid(thread.tid()));
            wait.merge(labels, thread.barrierWaitNs() / 1e9, Double::sum);
            work.merge(labels, thread.workNs() / 1e9, Double::sum);
        }
        out.metricSnapshot(counter("infertop_barrier_wait_seconds", Unit.SECONDS,
                "Time each worker thread waited at ggml barriers (operator layer)", created, wait));
        out.metricSnapshot(counter("infertop_thread_work_seconds", Unit.SECONDS,
                "Time each worker thread worked on graph nodes (operator layer)", created, work));

        MoeTotals moe = s.moe();
        if (moe != null && moe.active()) {
            Map<Labels, Double> selections = new LinkedHashMap<>();
            int ownSeries = moe.seriesExperts(); // past MoeTotals.SERIES_CAP pairs, a layer's rest is one series
            for (int layer = 0; layer < moe.layerCount(); layer++) {
                long[] counts = moe.runCounts(layer);
                long rest = 0;
                for (int expert = 0; expert < counts.length; expert++) {
                    if (expert < ownSeries) {
                        selections.put(Labels.of("layer", Integer.toString(layer), "expert", Integer.toString(expert)),
                                (double) counts[expert]);
                    } else {
                        rest += counts[expert];
                    }
                }
                if (counts.length > ownSeries) {
                    selections.put(Labels.of("layer", Integer.toString(layer), "expert", Other.NAME), (double) rest);
                }
            }
            out.metricSnapshot(counter("infertop_moe_expert_selections", null,
                    "Tokens routed to each expert of each MoE layer, prefill and decode (moe layer)", created,
                    selections));
        }

        out.metricSnapshot(counter("infertop_lost_events", null,
                "Probe records lost (ring buffer full) or malformed", created,
                Map.of(Labels.EMPTY, (double) s.lostEvents())));
        OverheadEstimate estimate = OverheadEstimate.of(s);
        out.metricSnapshot(gauge("infertop_probe_cost_ratio", Unit.RATIO,
                "Estimated cost of watching, as the live view's header shows it: the overhead budget's estimate "
                        + "(share of the target's CPU), else the interval's probe hits as a share of one CPU; "
                        + "per-hit cost measured by infertop machine, else a default", estimate.fraction()));

        if (s.budget().present() && s.budget().measured()) {
            // The overhead budget's own estimate (% of the target's CPU) and the share it traces, as ratios.
            out.metricSnapshot(gauge("infertop_overhead_estimate_ratio", Unit.RATIO,
                    "infertop's estimated cost as a share of the target's own CPU time (--budget's estimate)",
                    s.budget().estimatePercent() / 100));
            out.metricSnapshot(gauge("infertop_overhead_budget_ratio", Unit.RATIO,
                    "The --budget limit as a share of the target's own CPU time (0: none)",
                    s.budget().budgetPercent() / 100));
        }
        // Without a budget at work: 1 with the operator layer on (every graph), 0 with it off.
        out.metricSnapshot(gauge("infertop_operator_sampled_ratio", Unit.RATIO,
                "Share of the time the operator layer's per-thread probes are attached (1: every graph)",
                SampledFigures.operatorSampledRatio(s)));

        // The op histograms count the traced graphs only (the budget's windows): these scale them to every graph
        // (man page: sampled figures), so a rate over any range has figures between windows.
        Map<Labels, Double> estimatedGroups = new LinkedHashMap<>();
        Map<Labels, Double> estimatedSeconds = new LinkedHashMap<>();
        for (OpEstimate op : s.total().operators().estimated()) {
            Labels labels = Labels.of("op", LabelValues.sanitize(op.op()), "backend", OPERATOR_BACKEND);
            estimatedGroups.merge(labels, op.groups(), Double::sum);
            estimatedSeconds.merge(labels, op.wallNs() / 1e9, Double::sum);
        }
        if (!estimatedGroups.isEmpty()) {
            out.metricSnapshot(counter("infertop_op_estimated_groups", null,
                    "Node groups of each op over every CPU graph: those traced, and the untraced graphs' share "
                            + "scaled from the sample windows (operator layer; equal to the traced count at budget 0)",
                    created, estimatedGroups));
            out.metricSnapshot(counter("infertop_op_estimated_seconds", Unit.SECONDS,
                    "Wall time of each op over every CPU graph: traced, and the untraced graphs' busy time divided "
                            + "as in the sample windows (operator layer)", created, estimatedSeconds));
        }

        // The clock samples, window or not (man page: --op-sample-hz): an op's share of them over any range.
        Map<Labels, Double> samples = new LinkedHashMap<>();
        for (OpSampleTotals.Op op : s.total().operators().sampled().ops()) {
            samples.merge(Labels.of("op", LabelValues.sanitize(op.op()), "backend", OPERATOR_BACKEND), op.samples(),
                    Double::sum);
        }
        if (!samples.isEmpty()) {
            out.metricSnapshot(counter("infertop_op_samples", null,
                    "Clock samples of the target's threads that named each op (operator layer's sampler, between "
                            + "the budget's windows too; a code line seen in two ops splits its samples)",
                    created, samples));
        }

        out.metricSnapshot(histogram("infertop_ttft_seconds",
                "Time of each prefill llama_decode call (TTFT)", created,
                Map.of(Labels.EMPTY, latency(frame, HistogramTag.TTFT, LatencyBuckets.TTFT_EDGES_NS)
                        .withSumSeconds(s.total().ttft().meanMs() * s.total().ttft().count() / 1e3))));
        out.metricSnapshot(histogram("infertop_tpot_seconds",
                "Time of each one-token llama_decode call (TPOT)", created,
                Map.of(Labels.EMPTY, latency(frame, HistogramTag.TPOT, LatencyBuckets.TPOT_EDGES_NS)
                        .withSumSeconds(s.total().tpot().meanMs() * s.total().tpot().count() / 1e3))));
        Map<Labels, LatencyBuckets> ops = new LinkedHashMap<>();
        for (OpTotals op : s.total().operators().ops()) {
            LatencyBuckets buckets = frame.latencies().get(HistogramTag.op(op.op()));
            if (buckets == null) {
                continue;
            }
            // The wall times' exact sum is kept with the op: no need for the buckets' estimate.
            ops.putIfAbsent(Labels.of("op", LabelValues.sanitize(op.op()), "backend", OPERATOR_BACKEND),
                    buckets.withSumSeconds(op.wallNs() / 1e9));
        }
        if (!ops.isEmpty()) {
            out.metricSnapshot(histogram("infertop_op_duration_seconds",
                    "Wall time of each node group of an op type, barrier to barrier (operator layer)", created, ops));
        }
        return out.build();
    }

    private static LatencyBuckets latency(MetricsFrame frame, String tag, long[] edges) {
        LatencyBuckets buckets = frame.latencies().get(tag);
        return buckets != null ? buckets : LatencyBuckets.empty(edges);
    }

    private static CounterSnapshot counter(String name, Unit unit, String help, long createdMs,
                                           Map<Labels, Double> values) {
        CounterSnapshot.Builder builder = CounterSnapshot.builder().name(name).help(help);
        if (unit != null) {
            builder.unit(unit);
        }
        for (Map.Entry<Labels, Double> value : values.entrySet()) {
            // A run sum of durations taken from corrupt records can wrap past Long.MAX_VALUE to a negative value,
            // and the client refuses a negative counter: that would fail the whole frame and leave every metric
            // at its last frame for the rest of the run. The wrapped series reads 0 (a reset) instead.
            builder.dataPoint(CounterDataPointSnapshot.builder().labels(value.getKey())
                    .value(Math.max(0.0, value.getValue())).createdTimestampMillis(createdMs).build());
        }
        return builder.build();
    }

    /**
     * Offload: how each backend's end of work is known (a series per backend, 1, its completion a label), device-
     * complete time only for the backends where a synchronize closed their work (never a 0 for "unknown"), the
     * host's waits for each backend and the bytes copied into it.
     */
    private static void offload(MetricSnapshots.Builder out, OffloadTotals offload, long created) {
        GaugeSnapshot.Builder completion = GaugeSnapshot.builder().name("infertop_backend_completion")
                .help("1 per backend, labelled with how its work's end is known: device-complete, enqueue only "
                        + "(no synchronize of it seen: its times are the compute calls'), computes in the call");
        Map<Labels, Double> device = new LinkedHashMap<>();
        Map<Labels, Double> hostWait = new LinkedHashMap<>();
        Map<Labels, Double> bytesIn = new LinkedHashMap<>();
        Map<Labels, Double> bytesPerGraph = new LinkedHashMap<>();
        for (OffloadTotals.Backend backend : offload.backends()) {
            Labels labels = Labels.of("backend", LabelValues.sanitize(backend.backend()));
            completion.dataPoint(GaugeDataPointSnapshot.builder().labels(labels.add("completion",
                    backend.completion().label())).value(1).build());
            if (backend.completion() == OffloadTotals.Completion.DEVICE_COMPLETE) {
                device.merge(labels, backend.deviceNs() / 1e9, Double::sum);
            }
            hostWait.merge(labels, backend.waitNs() / 1e9, Double::sum);
            bytesIn.merge(labels, (double) backend.bytesIn(), Double::sum);
            if (backend.graphs() > 0 && !offload.copiesUnseen(backend)) {
                bytesPerGraph.put(labels, backend.bytesInPerGraph());
            }
        }
        out.metricSnapshot(completion.build());
        out.metricSnapshot(counter("infertop_backend_device_complete_seconds", Unit.SECONDS,
                "Per device backend, from its queued computes' first entry to the synchronize that closed them "
                        + "(an upper bound of device time); its enqueue time is infertop_graph_busy_seconds",
                created, device));
        out.metricSnapshot(counter("infertop_backend_host_wait_seconds", Unit.SECONDS,
                "Time the host spent in ggml_backend_synchronize per backend", created, hostWait));
        out.metricSnapshot(counter("infertop_backend_copied_in_bytes", Unit.BYTES,
                "Bytes of the tensors the scheduler copied into each backend", created, bytesIn));
        GaugeSnapshot.Builder perGraph = GaugeSnapshot.builder().name("infertop_backend_copied_in_per_graph_bytes")
                .help("Bytes the scheduler copied into each backend per graph it computed, over the run").unit(Unit.BYTES);
        bytesPerGraph.forEach((labels, v) -> perGraph.dataPoint(GaugeDataPointSnapshot.builder().labels(labels)
                .value(v).build()));
        out.metricSnapshot(perGraph.build());
        // Per token only for the kinds of token decoded: a gauge with no series says "none", never a 0.
        GaugeSnapshot.Builder perToken = GaugeSnapshot.builder().name("infertop_copied_in_per_token_bytes")
                .help("Bytes the scheduler copied between backends per token decoded, over the run, by token kind "
                        + "(prompt: calls of more than one token; generated: calls of one)").unit(Unit.BYTES);
        OffloadTotals.TokenBytes tokens = offload.perToken();
        boolean seen = offload.backendsWithCopiesUnseen().isEmpty();
        if (seen && tokens.promptTokens() > 0) {
            perToken.dataPoint(GaugeDataPointSnapshot.builder().labels(Labels.of("token", "prompt"))
                    .value(tokens.bytesPerPromptToken()).build());
        }
        if (seen && tokens.generatedTokens() > 0) {
            perToken.dataPoint(GaugeDataPointSnapshot.builder().labels(Labels.of("token", "generated"))
                    .value(tokens.bytesPerGeneratedToken()).build());
        }
        out.metricSnapshot(perToken.build());
    }

    /**
     * A device backend's host dispatch, node by node (Vulkan's recording), per backend and op: the nodes it
     * dispatched and the nodes fused into an earlier one's dispatch. Only backends followed so have series: the
     * others have none, never a 0. Host work, never device time. Bounded: ops of ggml's enum, 16 backends.
     */
    private static void nodeDispatch(MetricSnapshots.Builder out, List<BackendOps> backends,
                                     long created) {
        Map<Labels, Double> dispatched = new LinkedHashMap<>();
        Map<Labels, Double> fused = new LinkedHashMap<>();
        for (BackendOps backend : backends) {
            if (backend.dispatch() == null) {
                continue;
            }
            for (BackendOps.OpDispatch op : backend.dispatch().ops()) {
                Labels labels = Labels.of("backend", LabelValues.sanitize(backend.backend()), "op",
                        LabelValues.sanitize(op.op()));
                if (!op.view()) {
                    dispatched.merge(labels, (double) op.calls(), Double::sum);
                }
                fused.merge(labels, (double) op.fused(), Double::sum);
            }
        }
        out.metricSnapshot(counter("infertop_backend_node_dispatches", null,
                "Nodes a device backend dispatched one by one on the host, per op (Vulkan's recording; the graphs "
                        + "followed in the operator layer's windows): host work, not device time", created,
                dispatched));
        out.metricSnapshot(counter("infertop_backend_fused_nodes", null,
                "Nodes a device backend computed inside an earlier node's fused dispatch, per op", created, fused));
    }

    private static GaugeSnapshot gauge(String name, Unit unit, String help, double value) {
        GaugeSnapshot.Builder builder = GaugeSnapshot.builder().name(name).help(help);
        if (unit != null) {
            builder.unit(unit);
        }
        return builder.dataPoint(GaugeDataPointSnapshot.builder().value(value).build()).build();
    }

    /**
     * whisper.cpp's units, for a whisper.cpp program only (its llama.cpp token counters stay 0: it makes no such call).
     * The real-time factor is rate(audio) / rate(transcribing) over any window.
     */
    private static void whisper(MetricSnapshots.Builder out, WhisperTotals w, long created) {
        out.metricSnapshot(counter("infertop_whisper_transcriptions", null,
                "whisper.cpp transcription calls (whisper_full_with_state) that returned", created,
                Map.of(Labels.EMPTY, (double) w.transcriptions())));
        out.metricSnapshot(counter("infertop_whisper_audio_seconds", Unit.SECONDS,
                "Seconds of 16 kHz audio those calls transcribed", created, Map.of(Labels.EMPTY, w.audioSeconds())));
        out.metricSnapshot(counter("infertop_whisper_transcribing_seconds", Unit.SECONDS,
                "Wall time inside those calls: audio seconds over it is the real-time factor", created,
                Map.of(Labels.EMPTY, w.transcribingNs() / 1e9)));
        out.metricSnapshot(counter("infertop_whisper_encoder_passes", null,
                "whisper.cpp encoder passes (graphs with its mel input)", created,
                Map.of(Labels.EMPTY, (double) w.encoderPasses())));
        out.metricSnapshot(counter("infertop_whisper_decoder_calls", null,
                "whisper.cpp decoder calls (graphs reading its token ids)", created,
                Map.of(Labels.EMPTY, (double) w.decoderCalls())));
        out.metricSnapshot(counter("infertop_whisper_decoder_tokens", null,
                "Tokens whisper.cpp's decoder computed (every beam's, the prompt's)", created,
                Map.of(Labels.EMPTY, (double) w.decoderTokens())));
    }

    private static HistogramSnapshot histogram(String name, String help, long createdMs,
                                               Map<Labels, LatencyBuckets> values) {
        HistogramSnapshot.Builder builder = HistogramSnapshot.builder().name(name).help(help).unit(Unit.SECONDS);
        for (Map.Entry<Labels, LatencyBuckets> value : values.entrySet()) {
            LatencyBuckets buckets = value.getValue();
            builder.dataPoint(HistogramDataPointSnapshot.builder().labels(value.getKey())
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(buckets.upperBoundsSeconds(), buckets.counts()))
                    .sum(buckets.sumSeconds()).createdTimestampMillis(createdMs).build());
        }
        return builder.build();
    }

    /** The metric names this mapping can produce (OpenMetrics family names), for the docs' check. */
    static final List<String> NAMES = List.of("infertop_target_info", "infertop_target_running",
            "infertop_prefill_tokens_total", "infertop_decode_tokens_total", "infertop_decode_calls_total",
            "infertop_encode_calls_total", "infertop_encode_tokens_total", "infertop_token_source_info",
            "infertop_graph_prefill_tokens_total", "infertop_graph_decode_tokens_total",
            "infertop_whisper_transcriptions_total", "infertop_whisper_audio_seconds_total",
            "infertop_whisper_transcribing_seconds_total", "infertop_whisper_encoder_passes_total",
            "infertop_whisper_decoder_calls_total", "infertop_whisper_decoder_tokens_total",
            "infertop_graph_computes_total", "infertop_graph_busy_seconds_total", "infertop_backend_completion",
            "infertop_backend_device_complete_seconds_total", "infertop_backend_host_wait_seconds_total",
            "infertop_backend_copied_in_bytes_total", "infertop_backend_copied_in_per_graph_bytes",
            "infertop_copied_in_per_token_bytes", "infertop_backend_node_dispatches_total",
            "infertop_backend_fused_nodes_total", "infertop_barrier_wait_seconds_total",
            "infertop_thread_work_seconds_total", "infertop_moe_expert_selections_total", "infertop_lost_events_total",
            "infertop_probe_cost_ratio", "infertop_overhead_estimate_ratio", "infertop_overhead_budget_ratio",
            "infertop_operator_sampled_ratio", "infertop_ttft_seconds", "infertop_tpot_seconds",
            "infertop_op_duration_seconds", "infertop_op_estimated_groups_total",
            "infertop_op_estimated_seconds_total", "infertop_op_samples_total");
}
