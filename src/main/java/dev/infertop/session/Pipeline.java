package dev.infertop.session;

import dev.infertop.agg.OpSamples;
import dev.infertop.agg.WhisperAggregator;
import dev.infertop.io.ConfigFiles;
import dev.infertop.model.Roofline;
import dev.infertop.agg.BackendOpsAggregator;
import dev.infertop.agg.CalibratedOpNaming;
import dev.infertop.agg.CounterAggregator;
import dev.infertop.agg.DagRecorder;
import dev.infertop.agg.MoeAggregator;
import dev.infertop.agg.OffloadAggregator;
import dev.infertop.agg.OpNaming;
import dev.infertop.agg.OperatorAggregator;
import dev.infertop.agg.RooflineAggregator;
import dev.infertop.agg.SchedAggregator;
import dev.infertop.agg.ThreadSlots;
import dev.infertop.agg.TokenAggregator;
import dev.infertop.agg.TraceAggregator;
import dev.infertop.event.EventDecoder;
import dev.infertop.event.NameTable;
import dev.infertop.model.BackendNames;
import dev.infertop.process.TracedProcess;
import dev.infertop.process.layout.CalibratedLayout;

import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * The collector's side of the data path (decoder → aggregators), built the same way for tracing and for the
 * warm-up. {@code dag} is null without a calibrated layout.
 */
record Pipeline(NameTable names, TraceAggregator aggregator, EventDecoder decoder, CounterAggregator counters,
                DagRecorder dag) {

    /**
     * Without the machine's ceilings: the roofline's points, no verdict (the warm-up, tests). {@code moePlans}
     * writes MoE plans into BPF; {@code leafNames} reads a tensor name from the target (the DAG's weights).
     */
    static Pipeline build(CalibratedLayout layout, BackendNames backendNames, int targetPid, LongSupplier schedHits,
                          MoeAggregator.PlanWriter moePlans, LongFunction<String> leafNames) {
        return build(layout, backendNames, targetPid, schedHits, moePlans, leafNames, null);
    }

    /** {@code ceilings}: this machine's, for the roofline (null: none, no verdict). */
    static Pipeline build(CalibratedLayout layout, BackendNames backendNames, int targetPid, LongSupplier schedHits,
                          MoeAggregator.PlanWriter moePlans, LongFunction<String> leafNames,
                          Roofline.Ceilings ceilings) {
        return build(layout, backendNames, targetPid, schedHits, moePlans, leafNames, ceilings, () -> 0);
    }

    /** {@code samplePeriodNs}: the operator layer's clock sampler's period while it runs, else 0. */
    static Pipeline build(CalibratedLayout layout, BackendNames backendNames, int targetPid, LongSupplier schedHits,
                          MoeAggregator.PlanWriter moePlans, LongFunction<String> leafNames,
                          Roofline.Ceilings ceilings, LongSupplier samplePeriodNs) {
        NameTable names = new NameTable();
        OpNaming naming = layout != null ? new CalibratedOpNaming(layout) : null;
        // One table of the target's threads for every per-thread layer; a thread gone from the target gives
        // its slot back (the warm-up has no target: nothing is pruned there).
        ThreadSlots threads = new ThreadSlots(targetPid > 0 ? tid -> TracedProcess.threadGone(targetPid, tid)
                : tid -> false);
        TraceAggregator aggregator = new TraceAggregator(backendNames).withNames(names);
        // whisper.cpp's units, from its transcription calls and its graphs (the descriptions ProbeLoader gave the
        // probes number its records), ahead of the token layer: other runtimes' graph records go on to it.
        TokenAggregator tokens = new TokenAggregator();
        aggregator.register(new WhisperAggregator(ConfigFiles.graphRuntimes(), tokens));
        aggregator.register(tokens);
        if (naming != null) {
            aggregator.register(new OperatorAggregator(naming, names, threads));
        }
        aggregator.register(new SchedAggregator(targetPid, names, schedHits, threads));
        CounterAggregator counters = new CounterAggregator();
        aggregator.register(counters);
        // The backends' op counts before the offload layer: both follow the graph computes, in this order.
        aggregator.register(new BackendOpsAggregator(aggregator.backendKeys(), naming));
        aggregator.register(new OffloadAggregator(aggregator.backendKeys(), names));
        DagRecorder dag = null;
        if (naming != null) {
            // The clock samples are named by what the operator layer's windows saw: after it, from its graphs.
            aggregator.register(new OpSamples(samplePeriodNs));
            MoeAggregator moe = new MoeAggregator(naming, names, moePlans);
            aggregator.register(moe);
            dag = new DagRecorder(naming, names, leafNames);
            aggregator.register(dag);
            if (targetPid > 0) {
                // The MoE layer's ids tell the roofline which experts each MUL_MAT_ID read.
                aggregator.register(new RooflineAggregator(naming, layout.types(),
                        new TargetTensorSource(targetPid, layout.tensor(), layout.types()), moe, ceilings));
            }
        }
        return new Pipeline(names, aggregator, new EventDecoder(aggregator, names), counters, dag);
    }
}
