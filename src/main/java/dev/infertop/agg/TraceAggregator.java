package dev.infertop.agg;

import dev.infertop.bpf.GraphsInFlight;
import dev.infertop.event.NameTable;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.RooflineTotals;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.EventLayout;
import dev.infertop.event.TraceListener;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.BackendNames;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.Figures;
import dev.infertop.model.Layer;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Limits;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.RunState;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.TokenTotals;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The router of decoded records to the layers' aggregators, the graph layer's own aggregation (graph computes per
 * backend), and the freezing of every layer's figures into a {@link Snapshot} each tick. Single writer: the
 * collector thread calls the listener methods and {@link #snapshot}; recording is allocation-free. It names no
 * layer: every layer's aggregator, the token layer's first, is registered ({@link #register}) and reached through
 * {@link LayerAggregator} and the subscriptions its interfaces ask for.
 */
public final class TraceAggregator implements TraceListener {
    /** The backends by GUID, capped: the target chooses them. */
    private final BackendKeys backendKeys;
    /** Per {@link BackendKeys} index, the last being "other"; null until a graph ran there. */
    private final BackendSlot[] backends = new BackendSlot[BackendKeys.MAX_BACKENDS + 1];
    private final BackendSlot cpuGraphs = new BackendSlot("CPU");

    private long sequence;
    /**
     * A graph begun longer ago than this at a tick is not counted in flight: its thread left it without a return
     * (gone mid-graph, the probes detached meanwhile), and the start map kept its entry.
     */
    static final long MAX_IN_FLIGHT_NS = 120_000_000_000L;
    private long firstTickNs = -1;
    private long lastTickNs = -1;

    public TraceAggregator(BackendNames backendNames) {
        this.backendKeys = new BackendKeys(backendNames);
    }

    /**
     * Every layer's aggregator but the graph layer's own (this class's), in registration order: each stage below
     * iterates over them, and the decoder hands each its records directly ({@link #listenerFor}). What an
     * aggregator hears besides its records it subscribes to by the interfaces it implements ({@link
     * GraphComputeListener}, {@link DecodeListener}, {@link DecodeSource}).
     */
    private final List<LayerAggregator> layerAggregators = new ArrayList<>();

    /** The registered aggregators that follow every backend's graph computes, in registration order. */
    private final List<GraphComputeListener> graphComputeFollowers = new ArrayList<>();
    private final List<DecodeSource> decodeSources = new ArrayList<>();
    private final List<DecodeListener> decodeListeners = new ArrayList<>();
    /** The tables of the target's threads the registered layers key by (one, shared, in a traced run). */
    private final List<ThreadSlots> threadTables = new ArrayList<>();

    /** Whether a decoder has asked for the listeners per record kind: one taking records after would miss them. */
    private boolean recordsRouted;

    /**
     * Adds a layer's aggregator to every stage: its records, the CPU graphs (when there are any), the timelines, the
     * ticks, the snapshot's figures, and what its interfaces subscribe it to: every backend's graph computes
     * ({@link GraphComputeListener}, in registration order), the token layer's decode calls ({@link
     * DecodeListener}). Before the decoder is made. A layer's one registration line (see Pipeline).
     */
    public TraceAggregator register(LayerAggregator aggregator) {
        if (recordsRouted && takesRecords(aggregator)) {
            throw new IllegalStateException("the " + aggregator.layer().id() + " layer's aggregator registered after"
                    + " the decoder was made would miss its records");
        }
        layerAggregators.add(aggregator);
        if (aggregator instanceof GraphComputeListener follower) {
            graphComputeFollowers.add(follower);
        }
        if (aggregator instanceof DecodeSource source) {
            decodeSources.add(source);
            decodeListeners.forEach(source::decodesTo);
        }
        if (aggregator instanceof DecodeListener listener) {
            decodeListeners.add(listener);
            decodeSources.forEach(source -> source.decodesTo(listener));
        }
        ThreadSlots threads = aggregator.threadSlots();
        if (threads != null && !threadTables.contains(threads)) {
            threadTables.add(threads);
        }
        CpuGraphAssembler walk = aggregator.graphWalk();
        if (walk != null && graphs == null) {
            // The graph walk is the operator layer's: every layer registered before it follows it from now on.
            graphs = walk;
            for (LayerAggregator earlier : layerAggregators) {
                if (earlier != aggregator) {
                    earlier.followGraphs(graphs);
                }
            }
        } else if (graphs != null && walk == null) {
            aggregator.followGraphs(graphs);
        }
        if (flight != null) {
            aggregator.keepForSnapshots(flight, histograms);
        }
        return this;
    }

    private static boolean takesRecords(LayerAggregator aggregator) {
        for (int kind = 0; kind <= EventLayout.MAX_EVENT_KIND; kind++) {
            if (aggregator.records(kind) != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * The graph layer's records are this aggregator's own; every other kind goes to the first registered
     * aggregator that takes it (ignored when none does: its layer's aggregator was not made). So a runtime's own
     * units (whisper.cpp's), registered before the token layer, see the graph records first.
     */
    @Override
    public TraceListener listenerFor(int kind) {
        recordsRouted = true;
        for (LayerAggregator aggregator : layerAggregators) {
            TraceListener records = aggregator.records(kind);
            if (records != null) {
                return records;
            }
        }
        return this;
    }

    /** The layers whose aggregators are registered (besides the token and graph layers' own records). */
    public Set<Layer> aggregatedLayers() {
        Set<Layer> layers = EnumSet.noneOf(Layer.class);
        for (LayerAggregator aggregator : layerAggregators) {
            layers.add(aggregator.layer());
        }
        return layers;
    }

    /**
     * The CPU graph walk (the operator layer's, fed its node, arrival and fused records by the decoder): assembles
     * each graph once and hands it to every layer that follows it (sched, counters, DAG, MoE). Null without the
     * operator layer.
     */
    private CpuGraphAssembler graphs;

    // Snapshots: the timeline of the last seconds and every tick's histograms (null when not kept).
    private FlightRecorder flight;
    private IntervalHistograms histograms;
    private int cpuGraphLabel;
    /** Epoch ms minus monotonic ms, to stamp interval histograms with wall-clock times. */
    private final long epochOffsetMs = System.currentTimeMillis() - System.nanoTime() / 1_000_000;

    /**
     * The flight recorder, or null when none is kept: other layers' handlers record their own kinds into it
     * (thread states, counter samples, expert activations as instants).
     */
    public FlightRecorder flightRecorder() {
        return flight;
    }

    /**
     * Hands {@code reader} the run's latency histograms so far (values in ns), tagged as in the interval log:
     * {@code ttft}, {@code tpot}, {@code op:NAME} (ops that ran). They are the ones the snapshots' run
     * percentiles come from, complete up to the last {@link #snapshot}. Collector thread only, right after a
     * snapshot: they change with the next event, so a reader copies what it keeps.
     */
    public void forEachRunHistogram(java.util.function.BiConsumer<String, Histogram> reader) {
        for (LayerAggregator aggregator : layerAggregators) {
            aggregator.forEachRunHistogram(reader);
        }
    }

    /** Keeps slices in {@code flight} and interval histograms in {@code histograms} from now on. */
    public void keepForSnapshots(FlightRecorder flight, IntervalHistograms histograms) {
        this.flight = flight;
        this.histograms = histograms;
        if (flight != null) {
            cpuGraphLabel = flight.label("CPU graph");
        }
        for (LayerAggregator aggregator : layerAggregators) {
            aggregator.keepForSnapshots(flight, histograms);
        }
    }

    private static boolean layerOn(List<LayerStatus> layers, Layer which) {
        for (LayerStatus layer : layers) {
            if (layer.layer() == which && layer.state() != LayerStatus.State.OFF) {
                return true;
            }
        }
        return false;
    }

    /** Whether the reader should drain soon: a layer waits for what only the ring's records give (a MoE plan). */
    public boolean wantsPromptDrain() {
        for (LayerAggregator aggregator : layerAggregators) {
            if (aggregator.wantsPromptDrain()) {
                return true;
            }
        }
        return false;
    }

    private NameTable names;

    /** The decoder's name table, whose bound (and what it dropped) each snapshot reports. */
    public TraceAggregator withNames(NameTable nameTable) {
        this.names = nameTable;
        return this;
    }

    /**
     * What was kept and what went past the collector's bounds, run so far: every table keyed by something the
     * target (or another process) chooses, each bound named where its table is: the decoder's names, each
     * registered layer's tables, the graph layer's backends, the threads the per-thread layers share.
     */
    private Limits limits() {
        List<Limits.Bound> bounds = new ArrayList<>();
        bounds.add(Limits.Bound.of("tensor_names", names == null ? 0 : names.size(), "tensor_names_cap",
                NameTable.MAX_NAMES,
                Limits.Past.capped("name_records_dropped", names == null ? 0 : names.lookupsDropped())));
        for (LayerAggregator aggregator : layerAggregators) {
            bounds.addAll(aggregator.bounds());
        }
        BackendSlot otherBackend = backends[BackendKeys.OTHER];
        bounds.add(backendKeys.bound(otherBackend == null ? 0 : otherBackend.totalComputes()));
        bounds.add(threadSlots().bound());
        return new Limits(bounds);
    }

    private final ThreadSlots noThreads = new ThreadSlots();

    /** The target's threads as the per-thread layers key them (one table, shared by operator and sched). */
    private ThreadSlots threadSlots() {
        return threadTables.isEmpty() ? noThreads : threadTables.getFirst();
    }

    @Override
    public void onGraphCompute(int tid, long startNs, long endNs, long backendAddress, long guidHigh, long guidLow,
                               int nNodes, int status) {
        BackendSlot slot = backendSlot(guidHigh, guidLow);
        slot.record(tid, startNs, endNs, nNodes, lastTickNs);
        if (flight != null) {
            if (slot.flightLabel < 0) {
                slot.flightLabel = flight.label(slot.name + " graph");
            }
            flight.record(FlightRecorder.Kind.GRAPH, tid, startNs, endNs, slot.flightLabel, status, nNodes);
        }
        for (GraphComputeListener follower : graphComputeFollowers) {
            follower.onGraphCompute(tid, startNs, endNs, backendAddress, guidHigh, guidLow);
        }
    }

    /**
     * The registered aggregator of class {@code kind} (the first, exactly that class), or null when none is: what a
     * stage after the aggregation reads of one layer (the snapshot's DAG). Collector thread only.
     */
    public <T extends LayerAggregator> T registered(Class<T> kind) {
        for (LayerAggregator aggregator : layerAggregators) {
            if (aggregator.getClass() == kind) {
                return kind.cast(aggregator);
            }
        }
        return null;
    }

    private GraphsInFlight graphsInFlight = GraphsInFlight.NONE;

    /**
     * Reads the graphs still running at each tick, whose time up to the tick goes to the interval ending there
     * ({@link BackendSlot}). Before the first event.
     */
    public TraceAggregator withGraphsInFlight(GraphsInFlight source) {
        this.graphsInFlight = source;
        return this;
    }

    @Override
    public void onCpuGraphCompute(int tid, long startNs, long endNs, long cgraphAddress, int nNodes, int status) {
        cpuGraphs.record(tid, startNs, endNs, nNodes, lastTickNs);
        if (flight != null) {
            flight.record(FlightRecorder.Kind.GRAPH, tid, startNs, endNs, cpuGraphLabel, status, nNodes);
        }
    }

    private BackendSlot backendSlot(long guidHigh, long guidLow) {
        int index = backendKeys.indexOf(guidHigh, guidLow);
        BackendSlot slot = backends[index];
        if (slot == null) {
            slot = backends[index] = new BackendSlot(backendKeys.name(index));
        }
        return slot;
    }

    /** The backends by GUID as every layer keys them (the backends' op counts share them). */
    public BackendKeys backendKeys() {
        return backendKeys;
    }

    /**
     * Freezes the interval since the previous call (and the run so far) and starts a new interval.
     *
     * @param nowNs monotonic time of this tick (CLOCK_MONOTONIC, as the probes' timestamps)
     * @param state {@link RunState#RUNNING}, or why the run ended (this snapshot is then the last)
     */
    public Snapshot snapshot(long nowNs, RunState state, TargetInfo target, long lostEvents,
                             List<LayerStatus> layers) {
        boolean isFinal = state.ended();
        if (firstTickNs < 0) {
            firstTickNs = nowNs;
            lastTickNs = nowNs;
        }
        long intervalNs = nowNs - lastTickNs;
        long runNs = nowNs - firstTickNs;
        long intervalStartNs = lastTickNs;
        graphsInFlight.forEach((cpuPath, tid, startNs, guidHigh, guidLow) -> {
            // A start after the tick is a graph of the next interval; one from before the run began is counted
            // from the run's start (its record adds the rest).
            if (startNs < nowNs && nowNs - startNs < MAX_IN_FLIGHT_NS) {
                (cpuPath ? cpuGraphs : backendSlot(guidHigh, guidLow)).inFlight(tid, startNs, nowNs, intervalStartNs);
            }
        });
        lastTickNs = nowNs;
        if (histograms != null) {
            // Kept only when the interval holds values (most of a server's have no TTFT).
            histograms.beginInterval(epochOffsetMs + (nowNs - intervalNs) / 1_000_000, epochOffsetMs + nowNs / 1_000_000);
        }
        for (LayerAggregator aggregator : layerAggregators) {
            aggregator.closeInterval(nowNs);
        }
        if (isFinal) {
            for (LayerAggregator aggregator : layerAggregators) {
                aggregator.finishRun();
            }
        }
        for (LayerAggregator aggregator : layerAggregators) {
            aggregator.tick();
        }
        List<BackendTotals> intervalBackends = new ArrayList<>();
        List<BackendTotals> totalBackends = new ArrayList<>();
        for (BackendSlot slot : backends) {
            if (slot != null) {
                intervalBackends.add(slot.interval());
                totalBackends.add(slot.total());
            }
        }
        // The graph layer's figures, then each registered layer's added in registration order (the token layer's,
        // then the operator layer's, which the layers after it read): its interval closed before its run total.
        Figures interval = new Figures(intervalNs, TokenTotals.EMPTY, LatencySummary.EMPTY, LatencySummary.EMPTY,
                intervalBackends, cpuGraphs.interval(), OperatorTotals.EMPTY, SchedTotals.EMPTY, CounterTotals.EMPTY,
                List.of(), RooflineTotals.EMPTY);
        Figures total = new Figures(runNs, TokenTotals.EMPTY, LatencySummary.EMPTY, LatencySummary.EMPTY,
                totalBackends, cpuGraphs.total(), OperatorTotals.EMPTY, SchedTotals.EMPTY, CounterTotals.EMPTY,
                List.of(), RooflineTotals.EMPTY);
        for (LayerAggregator aggregator : layerAggregators) {
            interval = aggregator.addInterval(interval);
            total = aggregator.addTotal(total);
        }
        Snapshot snapshot = new Snapshot(++sequence, state, target, interval, total, lostEvents, layers,
                MoeTotals.EMPTY, new Limits(List.of()));
        for (LayerAggregator aggregator : layerAggregators) {
            snapshot = aggregator.addToSnapshot(snapshot, layerOn(layers, aggregator.layer()));
        }
        snapshot = snapshot.withLimits(limits());
        for (BackendSlot slot : backends) {
            if (slot != null) {
                slot.sample();
            }
        }
        cpuGraphs.sample();
        // Threads that exited give their slots back between ticks: their figures go to "other", which the
        // next interval's sample then starts from (an interval never sees a fold).
        for (ThreadSlots threads : threadTables) {
            threads.endTick();
        }
        return snapshot;
    }

    /** Marks the start of the run (first tick) without emitting a snapshot. */
    public void start(long nowNs) {
        firstTickNs = nowNs;
        lastTickNs = nowNs;
        for (LayerAggregator aggregator : layerAggregators) {
            aggregator.start(nowNs);
        }
    }
}
