package dev.infertop.snapshot;

import dev.infertop.event.ArrivalTimes;
import dev.infertop.io.ConfigFiles;
import dev.infertop.agg.Routers;
import dev.infertop.agg.OpNaming;
import dev.infertop.agg.OperatorAggregator;
import dev.infertop.agg.TraceAggregator;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import dev.infertop.export.SnapshotContent;
import dev.infertop.model.BackendNames;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.view.SnapshotView;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small traced run made of hand-made events fed through the real aggregators and a {@link SnapshotTaker}:
 * 2 threads (7 and 8), one prefill call of 4 tokens then 3 decode steps, one CPU graph per call of
 * MUL_MAT, VIEW (skipped), RMS_NORM+MUL (fused), ADD, ADD without COMPUTE (skipped); 2 interval ticks and the
 * final one. Everything a snapshot writes is consistent by construction.
 */
public final class SnapshotFixtures {
    static final int NONE = 0, ADD = 1, MUL = 2, MUL_MAT = 3, RMS_NORM = 4, VIEW = 5;
    static final int COMPUTE = 16;
    static final List<String> OP_NAMES = List.of("NONE", "ADD", "MUL", "MUL_MAT", "RMS_NORM", "VIEW");
    public static final int PID = 4242;

    private SnapshotFixtures() {}

    static final OpNaming NAMING = new OpNaming() {
        @Override
        public String opName(int op, int opParam0) {
            return OP_NAMES.get(op);
        }

        @Override
        public boolean isEmpty(int op) {
            return op == NONE || op == VIEW;
        }

        @Override
        public int computeFlag() {
            return COMPUTE;
        }
    };

    /** The fixture run, the taker that watched it, and what it said. */
    public record Run(TraceAggregator aggregator, SnapshotTaker taker, List<Snapshot> shown, List<String> notices,
                      NameTable names, long startNs) {
        public Snapshot last() {
            return shown.getLast();
        }
    }

    public static Run run(SnapshotOptions options) {
        NameTable names = new NameTable();
        TraceAggregator aggregator = Routers.of(ConfigFiles.backendNames(), new OperatorAggregator(NAMING, names));
        List<Snapshot> shown = new ArrayList<>();
        List<String> notices = new ArrayList<>();
        SnapshotView view = shown::add;
        SnapshotTaker taker = new SnapshotTaker(view, aggregator, names, options, notices::add, new AtomicInteger(),
                "infertop test");
        long start = System.nanoTime() - 500_000_000L;
        aggregator.start(start);
        int[] nameIds = new int[6];
        try (Arena arena = Arena.ofConfined()) {
            String[] tensorNames = {"ffn_up-0", "view-0", "norm-0", "attn_norm-0", "ffn_out-0", "l_out-0"};
            for (int i = 0; i < tensorNames.length; i++) {
                MemorySegment name = arena.allocateFrom(tensorNames[i], StandardCharsets.UTF_8);
                nameIds[i] = names.intern(name, 0, 64);
            }
        }
        long t = start;
        for (int call = 0; call < 4; call++) {
            int nTokens = call == 0 ? 4 : 1;
            long callStart = t;
            long graphStart = t + 1_000;
            long scale = call + 1; // each call slower than the one before: distinct percentiles
            graph(aggregator, call + 1, graphStart, nameIds);
            aggregator.listenerFor(EventLayout.EVENT_FUSED).onFused(7, call + 1, 2, 0x1002, 0x1003, graphStart);
            arrivals(aggregator, 7, call + 1, graphStart, graphStart + 100 * scale, graphStart + 130 * scale,
                    graphStart + 200 * scale, graphStart + 210 * scale);
            arrivals(aggregator, 8, call + 1, graphStart + 10, graphStart + 120 * scale, graphStart + 125 * scale,
                    graphStart + 190 * scale, graphStart + 210 * scale);
            long graphEnd = graphStart + 220 * scale;
            aggregator.onCpuGraphCompute(7, graphStart, graphEnd, 0xabc, 6, 0);
            long callEnd = graphEnd + 500;
            Routers.tokens(aggregator).onDecode(7, callStart, callEnd, 0x5000, nTokens, 0);
            t = callEnd + 50_000_000L;
            if (call == 1 || call == 2) {
                taker.show(aggregator.snapshot(t, RunState.RUNNING, target(), 0, layers()));
            }
        }
        taker.show(aggregator.snapshot(t + 1_000, RunState.EXITED, target(), 0, layers()));
        taker.finish(30_000); // as the session does once its probes are detached
        return new Run(aggregator, taker, shown, notices, names, start);
    }

    /** What the run's final snapshot would write, captured as the taker does. */
    public static SnapshotContent content() {
        Run run = run(new SnapshotOptions("unused", 0, false, 10));
        return run.taker().capture(run.last(), "test", System.nanoTime());
    }

    static TargetInfo target() {
        return new TargetInfo(PID, "llama-bench", "/models/tiny.gguf", List.of("/lib/libggml-base.so"));
    }

    static List<LayerStatus> layers() {
        return List.of(new LayerStatus(Layer.TOKEN, LayerStatus.State.ON, "", List.of("llama_decode")),
                new LayerStatus(Layer.GRAPH, LayerStatus.State.ON, "", List.of()),
                new LayerStatus(Layer.OPERATOR, LayerStatus.State.ON, "", List.of()));
    }

    private static void graph(TraceAggregator aggregator, long seq, long startNs, int[] nameIds) {
        int[] ops = {MUL_MAT, VIEW, RMS_NORM, MUL, ADD, ADD};
        int[] flags = {COMPUTE, COMPUTE, COMPUTE, COMPUTE, COMPUTE, 0};
        for (int i = 0; i < ops.length; i++) {
            // MUL_MAT's second source is the ADD node (0x1004, ne0 8): K = 8, 2·8·8 = 128 FLOPs
            aggregator.listenerFor(EventLayout.EVENT_NODE).onNode(seq, startNs, i, ops.length, 0x1000 + i, ops[i], 0,
                    flags[i], 0, 8, 1, 1, 1, 0, ops[i] == MUL_MAT ? 0x1004 : 0, 0, nameIds[i]);
        }
    }

    private static void arrivals(TraceAggregator aggregator, int tid, long seq, long startNs, long... times) {
        aggregator.listenerFor(EventLayout.EVENT_ARRIVALS).onArrivals(tid, seq, startNs, 0, 0, false,
                ArrivalTimes.of(times));
    }
}
