package dev.infertop.agg;

import dev.infertop.model.DecodeSteps;
import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.process.layout.TensorHeaders;
import dev.infertop.process.layout.TypeTable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The roofline's points, from each attributed CPU graph: for every node the loop ran, the bytes it must read
 * and write by its sources' and result's types and shapes (quantized blocks included) and its FLOPs, by the op's
 * {@link CostRule}; summed per op (as the ops table names a node group) over the wall time of the groups they
 * ran in. A decode step of one token also gives the model weight bytes one generated token streams.
 *
 * <p>MUL_MAT_ID (MoE experts) costs only the experts the router chose, from the ids the MoE layer read for the
 * same graph ({@link ExpertRouting}): the chosen experts' slices of the 3-D expert tensor, and 2·K·M FLOPs per
 * routed row. When those ids were not read (the MoE layer off, the read lost or cut short by its bound), the node
 * is not guessed at (not all experts, not k of them): its group is left out and counted as unrouted.
 *
 * <p>A group is costed whole or not at all: when any of its nodes cannot be (a leaf the exited target no longer
 * holds, a type not sized, unknown experts), its nodes are counted as uncosted and neither its bytes nor its wall
 * time enter the op's point. The weight bytes per decode token come from the last decode graph costed whole.
 * Work is per graph, without allocation once the ops, node lists and MoE layers have been seen; a reused graph
 * (same node list and grouping, no leaf read again since) adds the groups' costs kept from the last one and costs
 * only its routed groups again, so a decode step costs a few array reads per group, not a source lookup per node.
 */
public final class RooflineAggregator implements LayerAggregator, CpuGraphListener, DecodeListener {
    /** Graphs after which cached sources that are not model weights are read again. */
    static final int REFRESH_GRAPHS = TensorShapes.REFRESH_GRAPHS;

    /** A source tensor as the target holds it: its header, and whether it is a model weight. */
    public record Source(TensorHeaders.Header header, boolean weight) {}

    /** Reads the source tensor at an address (null: unreadable). */
    @FunctionalInterface
    public interface WeightSource {
        Source read(long address);

        /**
         * Reads {@code count} source tensors at once, {@code into[i]} the one at {@code addresses[i]} (null:
         * unreadable): the refresh of every cached leaf. The target's memory reads them in one syscall.
         */
        default void readAll(long[] addresses, int count, Source[] into) {
            for (int i = 0; i < count; i++) {
                into[i] = read(addresses[i]);
            }
        }
    }

    private final OpNaming naming;
    private final Roofline.Ceilings ceilings;
    private final NodeCosts costs;

    private final GroupCosts memo = new GroupCosts();

    /**
     * Each group's costs for the node list costed last, and the run's accumulator for its op: what a reused graph
     * adds without costing its nodes again. Arrays grow, never per graph.
     */
    private static final class GroupCosts {
        static final byte NOTHING_RAN = 0;
        static final byte FIXED = 1;
        /** Has a MUL_MAT_ID: its cost follows the router's choice, costed again every graph. */
        static final byte ROUTED = 2;

        Object layout;
        long nodesReadSeq = -1;
        long leafEpoch = -1;
        byte[] state = new byte[0];
        boolean[] costed = new boolean[0];
        long[] nodes = new long[0];
        long[] bytes = new long[0];
        long[] weightBytes = new long[0];
        long[] expertBytes = new long[0];
        long[] flops = new long[0];
        long[] unrouted = new long[0];
        long[] tokens = new long[0];
        long[] kvBytesPerPosition = new long[0];
        Counts[] op = new Counts[0];

        void reset(CpuGraph graph, long epoch) {
            layout = graph.layoutKey();
            nodesReadSeq = graph.nodesReadSeq();
            leafEpoch = epoch;
            int groups = graph.groupCount();
            if (state.length < groups) {
                int capacity = Math.max(groups, state.length * 2);
                state = new byte[capacity];
                costed = new boolean[capacity];
                nodes = new long[capacity];
                bytes = new long[capacity];
                weightBytes = new long[capacity];
                expertBytes = new long[capacity];
                flops = new long[capacity];
                unrouted = new long[capacity];
                tokens = new long[capacity];
                kvBytesPerPosition = new long[capacity];
                op = new Counts[capacity];
            } else {
                Arrays.fill(op, null); // another layout may name group k another op
            }
        }
    }

    // Every figure below is a run counter sampled at each interval (Counts): an interval is the difference.
    private static final int OP_NODES = 0;
    private static final int OP_BYTES = 1;
    private static final int OP_WEIGHT_BYTES = 2;
    private static final int OP_FLOPS = 3;
    private static final int OP_WALL_NS = 4;
    /** Per op name. */
    private final Map<String, Counts> ops = new LinkedHashMap<>();

    private static final int DECODE_GRAPHS = 0;
    private static final int UNCOSTED_NODES = 1;
    private static final int UNROUTED_NODES = 2;
    /** Generated tokens decoded in any batch, one per sequence, and their context lengths summed. */
    private static final int POSITIONED_TOKENS = 3;
    private static final int POSITIONED_CONTEXT_POSITIONS = 4;
    private final Counts counts = new Counts(5);
    private long weightBytesPerDecodeToken;
    private long expertWeightBytesPerDecodeToken;
    private long kvBytesPerPosition;

    private static final int STEPS = 0;
    private static final int STEP_TOKENS = 1;
    private static final int STEP_WEIGHT_BYTES = 2;
    private static final int STEP_KV_BYTES = 3;
    private static final int STEP_CONTEXT_POSITIONS = 4;
    private static final int STEP_FLOPS = 5;
    private static final int STEP_WALL_NS = 6;
    /** Per batch size. */
    private final Map<Integer, Counts> steps = new java.util.TreeMap<>();
    /** Batch sizes kept apart; a larger step is counted under this one. */
    static final int MAX_STEP_TOKENS = 256;

    // The graph costed last, until a decode step claims it (the token layer tells a step at its call's end).
    private long lastGraphSeq = -1;
    private boolean lastGraphClaimed = true;
    private long lastGraphTokens;
    private long lastGraphWeightBytes;
    private long lastGraphFlops;
    private long lastGraphWallNs;
    // A decode step told before its graph was finished (the graph is finished when the next one starts).
    private long pendingStepSeq = -1;
    private int pendingStepTokens;
    private long pendingStepContextPositions;

    public RooflineAggregator(OpNaming naming, TypeTable types, WeightSource source, ExpertRouting routing,
                              Roofline.Ceilings ceilings) {
        this.naming = naming;
        this.ceilings = ceilings;
        this.costs = new NodeCosts(naming, types, source, routing == null ? ExpertRouting.NONE : routing);
    }

    @Override
    public void onGraph(CpuGraph graph) {
        if (!graph.attributed() || !graph.nodesKnown()) {
            return;
        }
        costs.beginGraph(graph);
        // A reused graph (llama.cpp runs the same cgraph token after token) with no leaf read again since: its
        // groups cost what they cost last time, except the routed ones (MUL_MAT_ID), whose experts change per token.
        boolean reuse = memo.layout == graph.layoutKey() && memo.nodesReadSeq == graph.nodesReadSeq()
                && memo.leafEpoch == costs.epoch();
        if (!reuse) {
            memo.reset(graph, costs.epoch());
            costs.beginCosting();
        }
        String[] opNames = graph.groupOpNames();
        long graphWeightBytes = 0;
        long graphExpertBytes = 0;
        long graphFlops = 0;
        long graphWallNs = 0;
        long graphKvBytesPerPosition = 0;
        long tokens = -1;
        boolean complete = true;
        for (int group = 0; group < graph.groupCount(); group++) {
            if (!reuse || memo.state[group] == GroupCosts.ROUTED) {
                costGroup(graph, group);
            }
            byte state = memo.state[group];
            if (state == GroupCosts.NOTHING_RAN) {
                continue;
            }
            if (tokens < 0 && memo.tokens[group] > 0) {
                tokens = memo.tokens[group];
            }
            if (memo.costed[group]) {
                Counts op = memo.op[group];
                if (op == null) {
                    op = memo.op[group] = ops.computeIfAbsent(opNames[group], name -> new Counts(5));
                }
                op.add(OP_NODES, memo.nodes[group]);
                op.add(OP_BYTES, memo.bytes[group]);
                op.add(OP_WEIGHT_BYTES, memo.weightBytes[group]);
                op.add(OP_FLOPS, memo.flops[group]);
                op.add(OP_WALL_NS, graph.groupWallNs(group));
                graphWeightBytes += memo.weightBytes[group];
                graphExpertBytes += memo.expertBytes[group];
                graphFlops += memo.flops[group];
                graphWallNs += graph.groupWallNs(group);
                graphKvBytesPerPosition += memo.kvBytesPerPosition[group];
            } else {
                complete = false;
                counts.add(UNCOSTED_NODES, memo.nodes[group]);
                counts.add(UNROUTED_NODES, memo.unrouted[group]);
            }
        }
        if (tokens == 1) {
            counts.add(DECODE_GRAPHS, 1);
            if (complete) { // only from a graph costed whole: a partial sum is no token's weights
                weightBytesPerDecodeToken = graphWeightBytes;
                expertWeightBytesPerDecodeToken = graphExpertBytes;
            }
        }
        if (complete && graphKvBytesPerPosition > 0) {
            kvBytesPerPosition = graphKvBytesPerPosition;
        }
        lastGraphSeq = graph.seq();
        lastGraphClaimed = !complete; // a graph costed in part is no step's figures
        lastGraphTokens = tokens;
        lastGraphWeightBytes = graphWeightBytes;
        lastGraphFlops = graphFlops;
        lastGraphWallNs = graphWallNs;
        if (pendingStepSeq == graph.seq()) {
            pendingStepSeq = -1;
            claim(pendingStepTokens, pendingStepContextPositions);
        }
    }

    /**
     * The token layer read a decode step: {@code tokens} generated, one per sequence, whose context lengths sum to
     * {@code contextPositions} (-1: not read), computed by graph {@code graphSeq} (the latest graph read when the
     * call ended). Its graph, costed whole, gives the step's figures; a graph not read (between the budget's
     * windows, the latest then being an older one already claimed) gives none.
     */
    @Override
    public void onDecodeStep(long graphSeq, int tokens, long contextPositions) {
        if (graphSeq == lastGraphSeq) {
            claim(tokens, contextPositions);
        } else if (graphSeq > lastGraphSeq) {
            pendingStepSeq = graphSeq;
            pendingStepTokens = tokens;
            pendingStepContextPositions = contextPositions;
        }
    }

    /**
     * Every call's generated tokens decoded one per sequence (in decode steps or beside a prompt) and their
     * context lengths: the KV cells all decoding read, whether or not the step's graph was costed.
     */
    @Override
    public void onPositionedTokens(int tokens, long contextPositions) {
        counts.add(POSITIONED_TOKENS, tokens);
        counts.add(POSITIONED_CONTEXT_POSITIONS, contextPositions);
    }

    private void claim(int tokens, long contextPositions) {
        if (lastGraphClaimed || lastGraphTokens != tokens || tokens <= 0) {
            return; // claimed already, costed in part, or not this step's graph (its batch differs)
        }
        lastGraphClaimed = true;
        Counts step = steps.computeIfAbsent(Math.min(tokens, MAX_STEP_TOKENS), size -> new Counts(7));
        step.add(STEPS, 1);
        step.add(STEP_TOKENS, tokens);
        step.add(STEP_WEIGHT_BYTES, lastGraphWeightBytes);
        step.add(STEP_KV_BYTES, contextPositions > 0 ? contextPositions * kvBytesPerPosition : 0);
        step.add(STEP_CONTEXT_POSITIONS, Math.max(0, contextPositions));
        step.add(STEP_FLOPS, lastGraphFlops);
        step.add(STEP_WALL_NS, lastGraphWallNs);
    }

    /** Costs one group's executed nodes into the memo's slots for it. */
    private void costGroup(CpuGraph graph, int group) {
        long nodes = 0;
        long bytes = 0;
        long weightBytes = 0;
        long expertBytes = 0;
        long flops = 0;
        long unrouted = 0;
        long tokens = -1;
        long kvBytesPerPosition = 0;
        boolean costed = true;
        boolean routed = false;
        for (int node = graph.firstNode(group); node <= graph.lastNode(group); node++) {
            if (!graph.executes(naming, node)) {
                continue;
            }
            nodes++;
            routed |= costs.rule(graph.op(node)) == CostRule.MUL_MAT_ID;
            if (!costs.cost(graph, node, group)) {
                costed = false;
                unrouted += costs.nodeUnrouted ? 1 : 0;
                continue;
            }
            bytes += costs.nodeBytes;
            weightBytes += costs.nodeWeightBytes;
            expertBytes += costs.nodeExpertBytes;
            flops += costs.nodeFlops;
            kvBytesPerPosition += costs.nodeKvBytesPerPosition;
            if (tokens < 0 && costs.nodeTokens > 0) {
                tokens = costs.nodeTokens;
            }
        }
        memo.state[group] = nodes == 0 ? GroupCosts.NOTHING_RAN : routed ? GroupCosts.ROUTED : GroupCosts.FIXED;
        memo.costed[group] = costed;
        memo.nodes[group] = nodes;
        memo.bytes[group] = bytes;
        memo.weightBytes[group] = weightBytes;
        memo.expertBytes[group] = expertBytes;
        memo.flops[group] = flops;
        memo.unrouted[group] = unrouted;
        memo.tokens[group] = tokens;
        memo.kvBytesPerPosition[group] = kvBytesPerPosition;
    }

    /** Costs the operator layer's nodes: its figures are that layer's. */
    @Override
    public Layer layer() {
        return Layer.OPERATOR;
    }

    @Override
    public void followGraphs(CpuGraphAssembler graphs) {
        graphs.addListener(this);
    }

    @Override
    public Figures addInterval(Figures figures) {
        return figures.withRoofline(interval());
    }

    @Override
    public Figures addTotal(Figures figures) {
        return figures.withRoofline(totals());
    }

    /** The run so far. */
    public RooflineTotals totals() {
        return figures(true);
    }

    /** Since the last interval, and starts the next one. */
    public RooflineTotals interval() {
        RooflineTotals interval = figures(false);
        steps.values().forEach(Counts::sample);
        ops.values().forEach(Counts::sample);
        counts.sample();
        return interval;
    }

    private RooflineTotals figures(boolean run) {
        List<DecodeSteps> decodeSteps = new ArrayList<>();
        for (Map.Entry<Integer, Counts> entry : steps.entrySet()) {
            Counts step = entry.getValue();
            if (step.of(STEPS, run) > 0) {
                decodeSteps.add(new DecodeSteps(entry.getKey(), step.of(STEPS, run), step.of(STEP_TOKENS, run),
                        step.of(STEP_WEIGHT_BYTES, run), step.of(STEP_KV_BYTES, run),
                        step.of(STEP_CONTEXT_POSITIONS, run), step.of(STEP_FLOPS, run), step.of(STEP_WALL_NS, run)));
            }
        }
        List<RooflineTotals.OpRoofline> opFigures = new ArrayList<>();
        for (Map.Entry<String, Counts> entry : ops.entrySet()) {
            Counts op = entry.getValue();
            if (op.of(OP_NODES, run) > 0) {
                opFigures.add(new RooflineTotals.OpRoofline(entry.getKey(), op.of(OP_NODES, run),
                        op.of(OP_BYTES, run), op.of(OP_WEIGHT_BYTES, run), op.of(OP_FLOPS, run),
                        op.of(OP_WALL_NS, run)));
            }
        }
        return new RooflineTotals(opFigures, counts.of(DECODE_GRAPHS, run), weightBytesPerDecodeToken,
                expertWeightBytesPerDecodeToken, counts.of(UNCOSTED_NODES, run), counts.of(UNROUTED_NODES, run),
                ceilings, decodeSteps, kvBytesPerPosition, counts.of(POSITIONED_TOKENS, run),
                counts.of(POSITIONED_CONTEXT_POSITIONS, run));
    }
}
