package dev.infertop.agg;

import dev.infertop.event.ArrivalTimes;
import dev.infertop.agg.graph.CpuGraphAssembler;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Set;

/**
 * The one way aggregator tests build CPU graphs: node, "same graph", fused-call and arrival records fed to a
 * {@link CpuGraphAssembler} as the decoder would, so every layer listening sees the graph assembled once.
 */
public final class GraphFixture {
    private final CpuGraphAssembler graphs;

    public GraphFixture(CpuGraphAssembler graphs) {
        this.graphs = graphs;
    }

    /** The fixture of an operator aggregator's own graph walk. */
    public GraphFixture(OperatorAggregator operators) {
        this(operators.graphs());
    }

    public CpuGraphAssembler graphs() {
        return graphs;
    }

    /** Ops named by their index in {@code names}; {@code emptyOps} computed by nothing; the COMPUTE flag bit. */
    public static OpNaming naming(List<String> names, int computeFlag, Set<Integer> emptyOps) {
        return new OpNaming() {
            @Override
            public String opName(int op, int opParam0) {
                return op >= 0 && op < names.size() ? names.get(op) : "op" + op;
            }

            @Override
            public boolean isEmpty(int op) {
                return emptyOps.contains(op);
            }

            @Override
            public int computeFlag() {
                return computeFlag;
            }
        };
    }

    /** Nodes 0..n-1 of graph {@code seq}: tensor {@code tensorBase + i}, shape [8,1,1,1], no sources, unnamed. */
    public GraphFixture nodes(long seq, long tensorBase, int[] ops, int[] flags) {
        for (int i = 0; i < ops.length; i++) {
            node(seq, 0, i, tensorBase + i, ops[i], flags[i], 8, 1, 1, 1, 0, 0, 0, -1);
        }
        return this;
    }

    /**
     * One node with everything a layer may read. Its record says the graph has {@code index + 1} nodes: built
     * node by node, a graph is as long as its last node (a list lacking its tail is {@link #nodeOf}'s).
     */
    public GraphFixture node(long seq, long startNs, int index, long tensor, int op, int flags, long ne0, long ne1,
                             long ne2, long ne3, long src0, long src1, long src2, int nameId) {
        graphs.onNode(seq, startNs, index, index + 1, tensor, op, 0, flags, 0, ne0, ne1, ne2, ne3, src0, src1, src2,
                nameId);
        return this;
    }

    /** Node {@code index} of a graph whose records say it has {@code nodeCount} nodes (some may never come). */
    public GraphFixture nodeOf(long seq, int index, int nodeCount, long tensor, int op, int flags) {
        graphs.onNode(seq, 0, index, nodeCount, tensor, op, 0, flags, 0, 8, 1, 1, 1, 0, 0, 0, -1);
        return this;
    }

    /** One node of ggml type {@code type} (the other nodes are type 0), unnamed: what a cost depends on. */
    public GraphFixture typed(long seq, long startNs, int index, long tensor, int op, int type, long ne0, long ne1,
                              long ne2, long ne3, long src0, long src1, long src2) {
        graphs.onNode(seq, startNs, index, index + 1, tensor, op, type, 0, 0, ne0, ne1, ne2, ne3, src0, src1, src2, -1);
        return this;
    }

    /** Graph {@code seq} runs the nodes read for {@code sameAsSeq}. */
    public GraphFixture same(long seq, long sameAsSeq, long timeNs) {
        graphs.onGraphSame(seq, sameAsSeq, timeNs);
        return this;
    }

    /** Thread {@code tid} ran group {@code group} as one fused call from {@code tensor} to {@code nextTensor}. */
    public GraphFixture fused(int tid, long seq, int group, long tensor, long nextTensor) {
        graphs.onFused(tid, seq, group, tensor, nextTensor);
        return this;
    }

    /** Thread {@code tid} started graph {@code seq} at {@code startNs} and reached the barrier at {@code times}. */
    public GraphFixture arrivals(int tid, long seq, long startNs, long... times) {
        return arrivals(tid, seq, startNs, 0, 0, false, times);
    }

    public GraphFixture arrivals(int tid, long seq, long startNs, int cpuFirst, int cpuLast, boolean migrated,
                                 long... times) {
        graphs.onArrivals(tid, seq, startNs, cpuFirst, cpuLast, migrated, ArrivalTimes.of(times));
        return this;
    }

    /** Tracing ends: the last graph is finished (in flight if no thread reported). */
    public GraphFixture finish() {
        graphs.finishLastGraph();
        return this;
    }
}
