package dev.infertop.agg;

import dev.infertop.model.Limits;
import dev.infertop.model.Snapshot;
import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.agg.graph.CpuGraphListener;
import dev.infertop.event.EventLayout;
import dev.infertop.event.ExpertIds;
import dev.infertop.event.NameTable;
import dev.infertop.event.TraceListener;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.history.MoeTimeline;
import dev.infertop.model.Layer;
import dev.infertop.model.MoeMath;
import dev.infertop.model.MoeTotals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * MoE layer: folds the expert ids that BPF copied from MUL_MAT_ID nodes into per layer × expert counts, and
 * makes the plans that tell BPF where to copy them when BPF did not make them itself (native/moe.bpf.h
 * plans a graph while the operator layer walks it, where the release has the COMPUTE flag).
 *
 * <p>Per traced graph the probes send, in ring order: a MOE_GRAPH record (its node-pointer signature), the
 * nodes (when read) or a "same graph" note, one MOE_IDS record per planned node group, then the threads'
 * barrier arrivals. When the next graph starts, the previous one is finished here:
 * <ul>
 *   <li>no plan yet for its signature: one is made from its nodes, fused groups and arrivals (the node group
 *       the CPU loop runs as k-th, as the operator layer counts them); when BPF sent no ids for the graph
 *       (it could not plan it), the plan is handed to BPF, so graphs of that signature from then on are
 *       read;</li>
 *   <li>a planned read that did not arrive (or failed) counts the graph as without ids, and its tokens as
 *       unread rows of that layer;</li>
 *   <li>each read node's time (the layer's MUL_MAT_ID groups, barrier release to release) goes to the
 *       experts active in it.</li>
 * </ul>
 * Single writer: the collector thread.
 */
public final class MoeAggregator implements LayerAggregator, CpuGraphListener, ExpertRouting {
    /** Writes a graph signature's plan into the probes' maps; false when it could not (maps full). */
    public interface PlanWriter {
        boolean write(long signature, int[] groups, long[] idsTensors, int[] layers);
    }

    /** Sliding window of the heatmap, in snapshot intervals. */
    public static final int WINDOW_TICKS = 10;
    /**
     * Model layers kept: every layer × expert table (22 of them: a 10-interval window and the run, decode and
     * prefill apart) grows to the highest layer seen, 1 MB each at this cap and 1024 experts. The target names
     * its tensors ("name-LAYER", up to 999 999): a layer at or past the cap is counted in
     * {@link #readsOverLayerCap()}, never allocated. MoE models have fewer than 100 layers.
     */
    public static final int MAX_LAYERS = 128;
    private long readsOverLayerCap;

    /** llama.cpp's LLAMA_MAX_EXPERTS: an id at or above it is not an expert id (counted, not used). */
    public static final int MAX_EXPERTS = 1024;
    /**
     * Graph plans kept, by the graph's node-pointer signature (the target chooses it: a graph built anew per
     * compute has a new one): as many as BPF's moe_graph_plans holds (native/moe.bpf.h). A graph of a new
     * signature once they are all kept is not planned, counted in {@link #graphsUnplanned()}: its ids are not
     * read, its MoE rows counted as unread (a plan is made for it to find them, then dropped).
     */
    public static final int MAX_PLANS = 64;
    private long graphsUnplanned;
    private long nodesReadFromHostCopies;
    // The batch being read, across graphs: the layer read last, and whether the batch had more than one token.
    private int lastLayerRead = -1;
    private boolean batchIsPrefill;
    /** The graph sequence given to host-copy reads: of no CPU graph followed here. */
    private static final long HOST_COPY_SEQ = Long.MIN_VALUE;
    private static final int PREFILL = 0;
    private static final int DECODE = 1;

    private final PlanWriter writer;
    private final MoePlanner planner;

    // The graph being followed.
    private long graphSeq = -1;
    private long readsSeq = -1; // the graph the reads below are of: kept after it finishes, for the roofline
    private long signature;
    private final List<int[]> readGroups = new ArrayList<>();   // {group, layer}
    private final List<long[]> readRows = new ArrayList<>();    // rows per expert of each read
    private int readCount;

    private final Map<Long, MoePlanner.Plan> plans = new HashMap<>();
    private boolean graphIsPrefill;
    private long graphsSeen;

    // Results.
    private final ExpertWindow[] window = {new ExpertWindow(WINDOW_TICKS), new ExpertWindow(WINDOW_TICKS)};
    private final ExpertWindow[] total = {new ExpertWindow(1), new ExpertWindow(1)};
    private final ReuseTracker reuse = new ReuseTracker();
    private long[] rowsUnread = new long[0];
    private int layers;
    private int experts;
    private int expertsUsed;
    private final ExpertTimes expertTimes = new ExpertTimes();
    private long nodesRead;
    private long nodesTruncated;
    private long rowsTruncated;
    private long graphsWithoutIds;
    private long readFailures;
    private long idBytesCopied;
    private long idsOutOfRange;

    public MoeAggregator(OpNaming naming, NameTable names, PlanWriter writer) {
        this.writer = writer;
        this.planner = new MoePlanner(naming, names);
    }

    public void onMoe(long seq, long graphSignature, int subtype, int group, int value, int layer, long ne0, long ne1,
                      long nb1, boolean failed, ExpertIds ids) {
        onMoe(0, 0, seq, graphSignature, subtype, group, value, layer, ne0, ne1, nb1, failed, ids);
    }

    /** With the thread that copied the ids and when: an ids read also goes to the timeline, when one is kept. */
    public void onMoe(int tid, long timeNs, long seq, long graphSignature, int subtype, int group, int value, int layer,
                      long ne0, long ne1, long nb1, boolean failed, ExpertIds ids) {
        if (subtype == EventLayout.MOE_GRAPH) {
            // A graph of a shape not planned yet: its plan is made when it ends, and every graph of that shape
            // until the plan reaches BPF goes unread, so the collector should drain promptly meanwhile.
            planPending = value == 0 && !failed && graphSignature != 0 && !plans.containsKey(graphSignature)
                    && plans.size() < MAX_PLANS; // past the cap no plan is coming
            finishGraph(null); // the CPU graph's own finish came first (when its nodes or arrivals came at all)
            graphSeq = seq;
            readsSeq = seq;
            signature = failed ? 0 : graphSignature;
            readCount = 0;
            graphIsPrefill = false;
            graphsSeen++;
            return;
        }
        if (subtype != EventLayout.MOE_IDS || layer < 0) {
            return;
        }
        if (layer >= MAX_LAYERS) {
            readsOverLayerCap++;
            return;
        }
        if (failed) {
            readFailures++;
            return; // the graph's finish counts its rows as unread
        }
        if (group == EventLayout.MOE_GROUP_HOST_COPY) {
            // The experts ran on a device: no CPU graph of this one's plans, no node time; counted by batch size.
            nodesReadFromHostCopies++;
            readIds(tid, timeNs, HOST_COPY_SEQ, group, layer, (int) Math.min(ne0, MAX_EXPERTS), ne1, nb1, value,
                    ids);
            return;
        }
        readIds(tid, timeNs, seq, group, layer, (int) Math.min(ne0, MAX_EXPERTS), ne1, nb1, value, ids);
    }

    // Snapshots: each ids read as an instant (null when no flight recorder is kept).
    private MoeTimeline timeline;

    /** Records each ids read into {@code flight} from now on (null: stop). */
    public void keepForSnapshots(FlightRecorder flight) {
        timeline = flight == null ? null : new MoeTimeline(flight);
    }

    private void readIds(int tid, long timeNs, long seq, int group, int layer, int used, long tokens, long nb1,
                         int bytes, ExpertIds ids) {
        nodesRead++;
        idBytesCopied += bytes;
        expertsUsed = Math.max(expertsUsed, used);
        long rows = rowsIn(bytes, used, tokens, nb1);
        if (rows < tokens) {
            nodesTruncated++;
            rowsTruncated += tokens - rows;
            addUnread(layer, tokens - rows);
        }
        if (nb1 > 0 && nb1 / 4 <= MAX_EXPERTS) {
            experts = Math.max(experts, (int) (nb1 / 4)); // a view of the router's argsort: one row per expert
        }
        layers = Math.max(layers, layer + 1);
        // A batch is prefill when it has more than one token. The last layer of a prefill graph computes only
        // the tokens whose logits are wanted (often one): it goes with its graph, not with decode. So does a
        // layer after a prefill batch's host-copy reads (its first layers computed on a device, the rest on the
        // CPU, in graphs of their own): a batch's layers come in order, so a read of a layer at or below the last
        // one read begins the next batch.
        if (seq == graphSeq && tokens > 1) {
            graphIsPrefill = true;
        }
        if (layer <= lastLayerRead) {
            batchIsPrefill = false;
        }
        lastLayerRead = layer;
        if (tokens > 1) {
            batchIsPrefill = true;
        }
        int phase = tokens > 1 || (seq == graphSeq && graphIsPrefill) || batchIsPrefill ? PREFILL : DECODE;
        long[] rowsByExpert = rowsScratch();
        for (int t = 0; t < rows; t++) {
            for (int j = 0; j < used; j++) {
                int expert = ids.id(t, nb1, j);
                if (expert < 0 || expert >= MAX_EXPERTS) {
                    idsOutOfRange++;
                    continue;
                }
                experts = Math.max(experts, expert + 1);
                window[phase].add(layer, expert, 1);
                total[phase].add(layer, expert, 1);
                reuse.activate(layer, expert, t);
                if (expert >= rowsByExpert.length) {
                    rowsByExpert = Arrays.copyOf(rowsByExpert, MAX_EXPERTS);
                    readRows.set(readCount, rowsByExpert);
                }
                rowsByExpert[expert]++;
            }
        }
        window[phase].addRows(layer, rows);
        total[phase].addRows(layer, rows);
        if (timeline != null) {
            timeline.activation(tid, timeNs, layer, tokens, used, rowsByExpert);
        }
        reuse.endBatch(layer, (int) Math.min(Integer.MAX_VALUE, tokens));
        if (seq == graphSeq) {
            if (readCount == readGroups.size()) {
                readGroups.add(new int[2]);
            }
            readGroups.get(readCount)[0] = group;
            readGroups.get(readCount)[1] = layer;
            readCount++;
        }
    }

    /** Whole rows in {@code bytes} copied from the start of an ids tensor: row t spans [t·nb1, t·nb1 + 4·used). */
    static long rowsIn(int bytes, int used, long tokens, long nb1) {
        if (bytes < 4L * used || used <= 0) {
            return 0;
        }
        if (tokens <= 1 || nb1 <= 0) {
            return Math.min(tokens, 1);
        }
        return Math.min(tokens, (bytes - 4L * used) / nb1 + 1);
    }

    /** The rows-per-expert array of the read being added (reused across graphs). */
    private long[] rowsScratch() {
        while (readRows.size() <= readCount) {
            readRows.add(new long[Math.max(experts, 8)]);
        }
        long[] rows = readRows.get(readCount);
        Arrays.fill(rows, 0);
        return rows;
    }

    private void addUnread(int layer, long tokens) {
        if (layer < 0 || layer >= MAX_LAYERS) {
            readsOverLayerCap++;
            return;
        }
        if (layer >= rowsUnread.length) {
            rowsUnread = Arrays.copyOf(rowsUnread, layer + 1);
        }
        layers = Math.max(layers, layer + 1);
        rowsUnread[layer] += tokens;
    }

    /** The CPU graph of the MoE graph followed (if it is that one) is finished: so is the MoE graph. */
    @Override
    public void onGraph(CpuGraph graph) {
        if (graph.seq() == graphSeq) {
            finishGraph(graph);
        }
    }

    @Override
    public Layer layer() {
        return Layer.MOE;
    }

    /** The operator layer's graph walk, once followed: a MoE graph record finishes the CPU graph before it. */
    private CpuGraphAssembler graphs;

    /** It follows the operator layer's graphs: their MUL_MAT_ID nodes are what it plans and reads. */
    @Override
    public void followGraphs(CpuGraphAssembler assembler) {
        this.graphs = assembler;
        assembler.addListener(this);
    }

    /** The MoE layer's record, as the decoder reads it. */
    private final TraceListener decoded = new TraceListener() {
        @Override
        public void onMoe(int tid, long timeNs, long graphSeq, long signature, int subtype, int group, int value,
                          int layer, long ne0, long ne1, long nb1, boolean failed, ExpertIds ids) {
            if (graphs != null && subtype == EventLayout.MOE_GRAPH) {
                // The MoE graph record comes before the graph's nodes: the CPU graph before it is finished now, so
                // this layer sees it before it moves on to the next.
                graphs.onGraphStart(graphSeq, timeNs);
            }
            MoeAggregator.this.onMoe(tid, timeNs, graphSeq, signature, subtype, group, value, layer, ne0, ne1, nb1,
                    failed, ids);
        }
    };

    @Override
    public TraceListener records(int kind) {
        return kind == EventLayout.EVENT_MOE ? decoded : null;
    }

    @Override
    public void keepForSnapshots(FlightRecorder flight, IntervalHistograms histograms) {
        keepForSnapshots(flight);
    }

    @Override
    public void finishRun() {
        finishLastGraph();
    }

    /** At the end of tracing (after the CPU graph's last): finishes the graph followed, if still open. */
    public void finishLastGraph() {
        finishGraph(null);
    }

    /**
     * Finishes the graph followed so far: plan, missing reads, node times. {@code graph}: its CPU graph, or null
     * when none came (its node and arrival records were lost, or the layer was switched on mid-graph).
     */
    private void finishGraph(CpuGraph graph) {
        if (graphSeq < 0) {
            return;
        }
        graphSeq = -1;
        boolean nodesKnown = graph != null && graph.nodesKnown();
        MoePlanner.Plan plan = signature != 0 ? plans.get(signature) : null;
        if (plan == null && nodesKnown) {
            plan = planner.plan(graph);
            if (plan != null && signature != 0 && plans.size() >= MAX_PLANS) {
                graphsUnplanned++; // neither kept nor written: used below for this graph's unread rows only
            } else if (plan != null && signature != 0) {
                plans.put(signature, plan);
                // BPF plans graphs itself while they are walked; when it did not (no reads came), write it.
                if (plan.hasMoe() && readCount == 0
                        && !writer.write(signature, plan.bpfGroups(), plan.idsTensors(), plan.layers())) {
                    plans.remove(signature); // not in BPF: try again with a later graph
                }
            }
        }
        if (plan == null || !plan.hasMoe()) {
            return;
        }
        boolean missing = false;
        for (int i = 0; i < plan.copyGroups().length; i++) {
            if (!wasRead(plan.copyGroups()[i])) {
                missing = true;
                int node = nodesKnown ? nodeOfGroupTokens(graph, plan, i) : -1;
                addUnread(plan.layers()[i], node >= 0 ? graph.ne(node, 2) : 0);
            }
        }
        if (missing) {
            graphsWithoutIds++;
        }
        if (graph != null) {
            recordNodeTimes(graph, plan);
        }
    }

    private boolean wasRead(int group) {
        return readAt(group) >= 0;
    }

    private int readAt(int group) {
        for (int r = 0; r < readCount; r++) {
            if (readGroups.get(r)[0] == group) {
                return r;
            }
        }
        return -1;
    }

    @Override
    public long[] rowsPerExpert(long graphSeq, int group) {
        int r = graphSeq == readsSeq ? readAt(group) : -1;
        return r < 0 ? null : readRows.get(r);
    }

    /** The node (in the current node list) of the i-th copy point: the first MUL_MAT_ID reading that ids tensor. */
    private int nodeOfGroupTokens(CpuGraph graph, MoePlanner.Plan plan, int i) {
        for (int n = 0; n < graph.nodeCount(); n++) {
            if (graph.src(n, 2) == plan.idsTensors()[i] && planner.isMulMatId(graph.op(n))) {
                return n;
            }
        }
        return -1;
    }

    private void recordNodeTimes(CpuGraph graph, MoePlanner.Plan plan) {
        if (graph.threadCount() == 0) {
            return;
        }
        for (int r = 0; r < readCount; r++) {
            int layer = readGroups.get(r)[1];
            int[] groups = plan.groupsByLayer().get(layer);
            if (groups == null) {
                continue;
            }
            long nodeNs = 0;
            for (int k : groups) {
                long wall = graph.barrierWallNs(k);
                if (wall < 0) {
                    nodeNs = -1;
                    break;
                }
                nodeNs += wall;
            }
            if (nodeNs < 0) {
                continue;
            }
            expertTimes.record(nodeNs, readRows.get(r));
        }
    }

    /** Ids reads (and unread rows' graphs) of a layer at or past {@link #MAX_LAYERS}: dropped, not allocated. */
    public long readsOverLayerCap() {
        return readsOverLayerCap;
    }

    /** Graphs of a new signature while {@link #MAX_PLANS} plans were kept: not planned. */
    public long graphsUnplanned() {
        return graphsUnplanned;
    }

    /**
     * This layer's bounded tables in the snapshot's limits: layers (from tensor names), experts (from the ids
     * read), graph plans (by signature), and the exported series of {@code totals} (per layer × expert).
     */
    public static java.util.List<Limits.Bound> bounds(MoeAggregator moe, MoeTotals totals) {
        long readsOverLayerCap = moe == null ? 0 : moe.readsOverLayerCap;
        long idsOutOfRange = moe == null ? 0 : moe.idsOutOfRange;
        long graphsUnplanned = moe == null ? 0 : moe.graphsUnplanned;
        int plans = moe == null ? 0 : moe.plans.size();
        return java.util.List.of(
                Limits.Bound.of(null, 0, "moe_layers_cap", MAX_LAYERS,
                        Limits.Past.capped("moe_reads_dropped", readsOverLayerCap)),
                Limits.Bound.of(null, 0, "moe_experts_cap", MAX_EXPERTS,
                        Limits.Past.capped("moe_ids_dropped", idsOutOfRange)),
                Limits.Bound.of("moe_plans", plans, "moe_plans_cap", MAX_PLANS,
                        Limits.Past.capped("moe_graphs_unplanned", graphsUnplanned)),
                Limits.Bound.of("moe_series", totals.seriesKept(), "moe_series_cap",
                        MoeTotals.SERIES_CAP, Limits.Past.capped("moe_series_folded",
                                totals.seriesFolded())));
    }

    /**
     * The figures so far (the window and the run), then starts a new window interval. At the end of tracing
     * call {@link #finishLastGraph()} first.
     *
     * @param layerOn whether the moe layer is switched on: a run that never had it on shows no MoE figures
     *                (views and JSON leave them out), one that had it on keeps them after it is switched off
     */
    public MoeTotals snapshot(boolean layerOn) {
        if (!layerOn && graphsSeen == 0) {
            return MoeTotals.EMPTY;
        }
        List<MoeTotals.ExpertStats> stats = new ArrayList<>();
        for (int e = 0; e < experts; e++) {
            stats.add(expertTimes.stats(e, reuse));
        }
        long[][] windowPrefill = window[PREFILL].counts(layers, experts);
        long[][] windowDecode = window[DECODE].counts(layers, experts);
        double[] cv = new double[layers];
        for (int l = 0; l < layers; l++) {
            long[] both = new long[experts];
            for (int e = 0; e < experts; e++) {
                both[e] = windowPrefill[l][e] + windowDecode[l][e];
            }
            cv[l] = MoeMath.coefficientOfVariation(both);
        }
        MoeTotals totals = new MoeTotals(true, WINDOW_TICKS, expertsUsed, windowPrefill, windowDecode,
                window[PREFILL].rows(layers), window[DECODE].rows(layers), total[PREFILL].counts(layers, experts),
                total[DECODE].counts(layers, experts), total[PREFILL].rows(layers), total[DECODE].rows(layers),
                Arrays.copyOf(rowsUnread, layers), stats, cv, EventLayout.MOE_MAX_ID_BYTES, nodesRead, nodesTruncated,
                rowsTruncated, graphsWithoutIds, readFailures, idBytesCopied, nodesReadFromHostCopies);
        window[PREFILL].tick();
        window[DECODE].tick();
        return totals;
    }

    private boolean planPending;
    /** The last snapshot's figures: the exported series its bounds report. */
    private MoeTotals lastTotals = MoeTotals.EMPTY;

    @Override
    public Snapshot addToSnapshot(Snapshot snapshot, boolean layerOn) {
        lastTotals = snapshot(layerOn);
        return snapshot.withMoe(lastTotals);
    }

    @Override
    public java.util.List<Limits.Bound> bounds() {
        return bounds(this, lastTotals);
    }

    @Override
    public boolean wantsPromptDrain() {
        return planPending;
    }

    /** A graph ran whose plan is not made yet: draining the ring soon gets it to BPF sooner. */
    public boolean planPending() {
        return planPending;
    }

    /** Ids outside 0..1023 (not expert ids: a misread); not counted as selections. */
    public long idsOutOfRange() {
        return idsOutOfRange;
    }
}
