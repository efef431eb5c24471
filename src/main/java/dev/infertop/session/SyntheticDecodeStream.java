package dev.infertop.session;

import dev.infertop.event.EventDecoder;
import dev.infertop.event.RecordWriter;
import dev.infertop.process.layout.CalibratedLayout;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * A synthetic llama decode stream in the probes' own record bytes, for running the collector's code before
 * the target runs (see {@link CollectorWarmup}). It is the shape of what the probes send for a small llama
 * model: a prefill every 96 calls, decode steps otherwise, each with its CPU graph (nodes read on the first
 * graph and every 32nd, "same graph" otherwise, a fused RMS_NORM+MUL per norm, barrier arrivals from two
 * threads), the backend graph and the llama_decode call. Node ops are looked up by name in the target's own
 * op table; ops this release lacks are left out. Times start at {@code startNs} and advance ~14 ms a call.
 */
final class SyntheticDecodeStream implements AutoCloseable {
    /** A prefill (8 tokens) every this many calls; decode steps otherwise. */
    static final int PREFILL_EVERY = 96;

    private static final int LAYERS = 3;
    private static final int THREADS = 2;
    private static final long TOKEN_NS = 14_000_000L;
    /** The BPF graph walk reads a reused graph's nodes again every 32 reuses (CONFIG_GRAPH_REFRESH). */
    private static final int REREAD_EVERY = 32;
    private static final long TENSOR_BASE = 0x7f00_0000_0000L;
    private static final long WEIGHT_BASE = 0x7e00_0000_0000L;

    /**
     * One node of the synthetic graph; {@code weight} is its first source's address (0: the previous node);
     * {@code empty}: an op the CPU loop skips (VIEW, RESHAPE, …), by the target's own list.
     */
    private record Node(int op, int opParam0, String name, long[] ne, long weight, boolean fusedWithNext,
                        boolean empty) {}

    private final RecordWriter records;
    private final int computeFlag;
    private final List<Node> decodeGraph;
    private final List<Node> prefillGraph;
    private final long[] cpuGuid;
    private long nowNs;
    private long calls;
    private long graphSeq;
    private List<Node> lastReadGraph;
    private long lastReadSeq = -1;
    private int reuses;

    /**
     * @param layout the target's calibrated layout, or null (no operator layer: no node records)
     * @param cpuGuid the CPU backend's GUID (two halves), or null
     */
    SyntheticDecodeStream(EventDecoder decoder, CalibratedLayout layout, long[] cpuGuid, long startNs) {
        this.records = new RecordWriter(decoder);
        this.cpuGuid = cpuGuid == null ? new long[2] : cpuGuid;
        this.computeFlag = layout == null ? 0 : layout.computeFlag();
        this.decodeGraph = layout == null ? List.of() : graph(layout, 1);
        this.prefillGraph = layout == null ? List.of() : graph(layout, 8);
        this.nowNs = startNs;
    }

    /** Calls written so far. */
    long calls() {
        return calls;
    }

    /** The stream's clock: the end of the last call written. */
    long nowNs() {
        return nowNs;
    }

    /** A llama block per layer, as llama.cpp builds it (names as its graph callbacks set them). */
    private static List<Node> graph(CalibratedLayout layout, long tokens) {
        List<Node> nodes = new ArrayList<>();
        long embd = 256;
        long ff = 704;
        add(nodes, layout, "GET_ROWS", 0, "inp_embd", new long[] {embd, tokens}, 1, false);
        for (int l = 0; l < LAYERS; l++) {
            long w = 16L * (l + 1);
            add(nodes, layout, "RMS_NORM", 0, "norm-" + l, new long[] {embd, tokens}, 0, true);
            add(nodes, layout, "MUL", 0, "attn_norm-" + l, new long[] {embd, tokens}, w, false);
            add(nodes, layout, "MUL_MAT", 0, "Qcur-" + l, new long[] {embd, tokens}, w + 1, false);
            add(nodes, layout, "MUL_MAT", 0, "Kcur-" + l, new long[] {64, tokens}, w + 2, false);
            add(nodes, layout, "MUL_MAT", 0, "Vcur-" + l, new long[] {64, tokens}, w + 3, false);
            add(nodes, layout, "RESHAPE", 0, "Qcur-" + l + " (reshaped)", new long[] {64, 4, tokens}, 0, false);
            add(nodes, layout, "ROPE", 0, "Qcur-" + l, new long[] {64, 4, tokens}, 0, false);
            add(nodes, layout, "ROPE", 0, "Kcur-" + l, new long[] {64, 1, tokens}, 0, false);
            add(nodes, layout, "VIEW", 0, "k_cache_view-" + l, new long[] {64 * tokens}, 0, false);
            add(nodes, layout, "CPY", 0, "k_cache_view-" + l + " (copy of Kcur-" + l + ")", new long[] {64 * tokens}, 0, false);
            add(nodes, layout, "PERMUTE", 0, "q-" + l, new long[] {64, tokens, 4}, 0, false);
            add(nodes, layout, "MUL_MAT", 0, "kq-" + l, new long[] {32, tokens, 4}, w + 4, false);
            add(nodes, layout, "SOFT_MAX", 0, "kq_soft_max-" + l, new long[] {32, tokens, 4}, 0, false);
            add(nodes, layout, "MUL_MAT", 0, "kqv-" + l, new long[] {64, tokens, 4}, w + 5, false);
            add(nodes, layout, "CONT", 0, "kqv_out-" + l, new long[] {embd, tokens}, 0, false);
            add(nodes, layout, "MUL_MAT", 0, "attn_out-" + l, new long[] {embd, tokens}, w + 6, false);
            add(nodes, layout, "ADD", 0, "ffn_inp-" + l, new long[] {embd, tokens}, 0, false);
            add(nodes, layout, "RMS_NORM", 0, "norm-" + l, new long[] {embd, tokens}, 0, true);
            add(nodes, layout, "MUL", 0, "ffn_norm-" + l, new long[] {embd, tokens}, w + 7, false);
            add(nodes, layout, "MUL_MAT", 0, "ffn_gate-" + l, new long[] {ff, tokens}, w + 8, false);
            add(nodes, layout, "MUL_MAT", 0, "ffn_up-" + l, new long[] {ff, tokens}, w + 9, false);
            if (!add(nodes, layout, "GLU", 0, "ffn_swiglu-" + l, new long[] {ff, tokens}, 0, false)) {
                int silu = Math.max(0, layout.ops().unaryOpNames().indexOf("SILU")); // releases before GLU
                add(nodes, layout, "UNARY", silu, "ffn_silu-" + l, new long[] {ff, tokens}, 0, false);
                add(nodes, layout, "MUL", 0, "ffn_gate_par-" + l, new long[] {ff, tokens}, 0, false);
            }
            add(nodes, layout, "MUL_MAT", 0, "ffn_out-" + l, new long[] {embd, tokens}, w + 10, false);
            add(nodes, layout, "ADD", 0, "l_out-" + l, new long[] {embd, tokens}, 0, false);
        }
        add(nodes, layout, "RMS_NORM", 0, "norm", new long[] {embd, tokens}, 0, true);
        add(nodes, layout, "MUL", 0, "result_norm", new long[] {embd, tokens}, 2, false);
        add(nodes, layout, "MUL_MAT", 0, "result_output", new long[] {32000, tokens}, 3, false);
        return nodes;
    }

    private static boolean add(List<Node> nodes, CalibratedLayout layout, String op, int opParam0, String name,
                               long[] ne, long weight, boolean fusedWithNext) {
        OptionalInt number = layout.ops().number(op);
        if (number.isEmpty()) {
            return false;
        }
        nodes.add(new Node(number.getAsInt(), opParam0, name, ne, weight == 0 ? 0 : WEIGHT_BASE + 0x1000 * weight,
                fusedWithNext, layout.emptyOps().contains(number.getAsInt())));
        return true;
    }

    /**
     * Writes the next llama_decode call's records. As the BPF graph walk does, a graph is sent node by node
     * unless it is the one read last (then "same graph"), and read again after 32 reuses.
     */
    void nextCall() {
        boolean prefill = calls++ % PREFILL_EVERY == 0;
        List<Node> graph = prefill ? prefillGraph : decodeGraph;
        graphSeq++;
        boolean read = graph != lastReadGraph || ++reuses >= REREAD_EVERY;
        if (read) {
            lastReadGraph = graph;
            lastReadSeq = graphSeq;
            reuses = 0;
        }
        nowNs = token(graph, graphSeq, read ? -1 : lastReadSeq, nowNs, prefill ? 8 : 1);
    }

    @Override
    public void close() {
        records.close();
    }

    /** One llama_decode: its graph's records as the probes send them, in their order. Returns its end. */
    private long token(List<Node> graph, long graphSeq, long sameAsSeq, long startNs, int nTokens) {
        int tid = 4242;
        long graphStartNs = startNs + 20_000;
        long cgraph = 0x5500_0000_0000L + (nTokens > 1 ? 0x100 : 0);
        if (!graph.isEmpty()) {
            if (sameAsSeq < 0) {
                for (int i = 0; i < graph.size(); i++) {
                    Node node = graph.get(i);
                    long tensor = TENSOR_BASE + 0x200L * i;
                    long src0 = node.weight() != 0 ? node.weight() : i == 0 ? WEIGHT_BASE : tensor - 0x200;
                    long src1 = node.weight() != 0 && i > 0 ? tensor - 0x200 : 0;
                    records.node(graphSeq, graphStartNs, i, graph.size(), tensor, node.op(), 0, computeFlag,
                            node.opParam0(), node.ne(), new long[] {src0, src1, 0}, node.name());
                }
            } else {
                records.graphSame(graphSeq, sameAsSeq, graphStartNs);
            }
        }
        long[] arrivals = new long[graph.size() + 1];
        long endNs = graphStartNs + TOKEN_NS;
        for (int thread = 0; thread < THREADS; thread++) {
            int groups = 0;
            long t = graphStartNs + 3_000L * thread;
            for (int i = 0; i < graph.size(); i++) {
                Node node = graph.get(i);
                if (node.empty()) {
                    continue;
                }
                if (node.fusedWithNext() && sameAsSeq < 0) {
                    records.fused(tid + thread, graphSeq, groups + 1, TENSOR_BASE + 0x200L * i,
                            TENSOR_BASE + 0x200L * (i + 1), t);
                }
                t += 20_000 + 7_000L * ((i + thread) % 5);
                arrivals[groups++] = t;
                if (node.fusedWithNext()) {
                    i++; // the next node runs in the same call, before the same barrier
                }
            }
            arrivals[groups++] = t + 1_000; // the barrier after the node loop
            endNs = Math.max(endNs, t + 2_000);
            if (!graph.isEmpty()) {
                records.arrivals(tid + thread, graphSeq, graphStartNs + 3_000L * thread, thread, arrivals, groups);
            }
        }
        int nodes = Math.max(graph.size(), 1);
        records.cpuGraph(tid, graphStartNs, endNs, cgraph, nodes);
        records.graph(tid, graphStartNs - 5_000, endNs + 5_000, 0x5600_0000_0000L, cpuGuid[0], cpuGuid[1], nodes);
        records.decode(tid, startNs, endNs + 10_000, 0x5700_0000_0000L, nTokens);
        return endNs + 20_000;
    }
}
