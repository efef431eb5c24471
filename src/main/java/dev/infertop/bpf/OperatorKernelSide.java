package dev.infertop.bpf;

import dev.infertop.process.MemoryMapping;
import dev.infertop.bpf.ProbeSites.Site;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;

/**
 * The operator layer's own machinery: its control map (on/off, every Nth graph, thread filter), the overhead
 * budget's sample windows (its per-thread probes detached between them), and the fused-op calls it may leave
 * unprobed. The session gets it from {@link ProbeSet#kernelSide}; every state change holds the probe set's lock.
 */
public final class OperatorKernelSide implements KernelSide {
    private final KernelSide.LayerHandle layer;
    private final OperatorControl control;
    /** The per-thread probes, detached between the overhead budget's sample windows. */
    private final ArrivalProbes arrivals = new ArrivalProbes();
    /**
     * Whether the fused-op call sites' libraries' fused ops can be worked out from the graph instead (given
     * the fused functions' names; see FusionPatterns); null: always probe them.
     */
    private Predicate<List<String>> fusionInferable;
    /** The fused calls are probed whatever the names say: a layer reading ours numbers groups by them, or asked. */
    private boolean fusedCallsRequired;
    /** Fused-op call sites found and left unprobed, as placement-like lines (the layer's status). */
    private final List<String> fusedCallsNotProbed = new ArrayList<>();
    /** The clock sampler's period per CPU (0: no sampler), and its links while the layer's probes are attached. */
    private long samplePeriodNs = DEFAULT_SAMPLE_PERIOD_NS;
    private List<ProbeLink> samplers;
    /** Why the sampler is not running, as a status line; empty while it runs or was not asked for. */
    private String samplerProblem = "";

    /**
     * The clock sampler's default period: 2 ms of a CPU's user time, 500 samples a second on a busy CPU. Its cost is
     * a timer interrupt per period per busy CPU, whatever the target runs.
     */
    public static final long DEFAULT_SAMPLE_PERIOD_NS = 2_000_000L;

    OperatorKernelSide(KernelSide.LayerHandle layer) {
        this.layer = layer;
        this.control = new OperatorControl(layer.object());
    }

    @Override
    public void afterEnable() throws BpfException {
        control.write(true);
    }

    @Override
    public void beforeDisable() throws BpfException {
        control.write(false); // stop reading graphs before the probes go
    }

    @Override
    public void detached() {
        arrivals.forget();
        control.paused(false);
        samplers = null; // closed with the layer's other links
    }

    /** The MoE layer's BPF side numbers a thread's groups by its fused calls: they are probed from then on. */
    @Override
    public void neededBy(ProbeLayer dependent) throws BpfException {
        requireFusedCalls();
    }

    @Override
    public void attachedCallSite(String program, Path library, MemoryMapping mappedAs,
                                 long fileOffset, ProbeLink link) {
        if (ArrivalProbes.isArrivalProgram(program)) {
            arrivals.attached(program, library, mappedAs, fileOffset, link);
            // the sampler learns from the CPU's barriers only; a device backend's dispatch teaches it nothing
            if (samplers == null && !program.equals(ProbeSpec.NODE_DISPATCH_PROGRAM)) {
                attachSamplers();
            }
        }
    }

    /**
     * The clock sampler, one timer per online CPU, from the layer's first barrier probe on: it names the op each
     * sample interrupted by what the barrier probes' windows teach (agg.OpSamples), so it runs only with them. It
     * stays attached between the budget's windows (that is its purpose) and goes with the layer's other links.
     */
    private void attachSamplers() {
        samplers = new ArrayList<>();
        samplerProblem = "";
        if (samplePeriodNs <= 0) {
            return;
        }
        try {
            for (int cpu : PerfCounters.onlineCpus()) {
                samplers.add(ClockSampleLink.attach(layer.object(), cpu, samplePeriodNs));
            }
        } catch (BpfException | RuntimeException e) {
            LinkCloser.closeAll(samplers);
            samplers.clear();
            samplerProblem = "op sampler off: " + e.getMessage();
            return;
        }
        layer.linksAttached(samplers);
    }

    /** The clock sampler's period per CPU from the next attach on; 0: none. */
    public void samplePeriodNs(long periodNs) {
        synchronized (layer.lock()) {
            this.samplePeriodNs = Math.max(0, periodNs);
        }
    }

    /** The sampler's period while it runs; 0 while it does not. */
    public long samplingPeriodNs() {
        synchronized (layer.lock()) {
            return samplers != null && !samplers.isEmpty() ? samplePeriodNs : 0;
        }
    }

    @Override
    public List<String> notes() {
        if (samplerProblem.isEmpty()) {
            return fusedCallsNotProbed;
        }
        List<String> notes = new ArrayList<>(fusedCallsNotProbed);
        notes.add(samplerProblem);
        return notes;
    }

    /**
     * From now on the layer leaves a library's fused-op calls unprobed when {@code inferable} says their
     * functions' fused ops can be worked out from the graph (set before the layer attaches).
     */
    public void inferFusedCalls(Predicate<List<String>> inferable) {
        synchronized (layer.lock()) {
            this.fusionInferable = inferable;
        }
    }

    /** Probes the fused-op calls from now on (attaching them now if the layer is on). */
    public void requireFusedCalls() throws BpfException {
        synchronized (layer.lock()) {
            if (fusedCallsRequired) {
                return;
            }
            fusedCallsRequired = true;
            fusedCallsNotProbed.clear();
            layer.attachMissingIfWanted();
        }
    }

    /** Whether fused-op call sites were found and left unprobed (their groups are inferred from the graph). */
    public boolean fusedCallsInferred() {
        synchronized (layer.lock()) {
            return !fusedCallsNotProbed.isEmpty();
        }
    }

    /**
     * Whether these are fused-op call sites whose fused ops the layer can work out from the graph (then they
     * cost a trap per fused call per thread for nothing): noted, and left unprobed.
     */
    @Override
    public boolean leaveUnprobed(ProbeSpec spec, Path library, List<Site> sites) {
        if (!(spec instanceof ProbeSpec.CallSiteProbe call) || !call.program().equals(ProbeSpec.FUSED_CALL_PROGRAM)
                || fusedCallsRequired || fusionInferable == null) {
            return false;
        }
        List<String> callees = sites.stream().map(Site::callee).distinct().toList();
        if (!fusionInferable.test(callees)) {
            return false;
        }
        String note = sites.size() + " fused-op call" + (sites.size() == 1 ? "" : "s") + " (" + String.join(", ", callees)
                + ") in " + library.getFileName() + " not probed: fused node groups are worked out from the graph"
                + " and checked against each thread's barrier count";
        if (!fusedCallsNotProbed.contains(note)) {
            fusedCallsNotProbed.add(note);
        }
        return true;
    }

    /** Trace every Nth graph only (1 = all). Takes effect at the next graph. */
    public void setEvery(int every) throws BpfException {
        synchronized (layer.lock()) {
            control.every(every);
            if (layer.wanted()) {
                control.write(true);
            }
        }
    }

    /** Only these threads report (empty: all). Barrier waits are then relative to them. */
    public void setThreads(Collection<Integer> tids) throws BpfException {
        synchronized (layer.lock()) {
            control.threads(tids);
            if (layer.wanted()) {
                control.write(true);
            }
        }
    }

    /**
     * The graphs the layer has begun tracing since it was loaded: a window in which none began traced nothing
     * (a long graph, a prompt under load, started before the window and outlasted it).
     */
    public long graphsTraced() throws BpfException {
        return layer.object().lookupLong(InfertopProbes.GRAPH_COUNTER_MAP, 0).orElse(0);
    }

    /** The graphs in flight (the graph layer's start maps), for a window's last graph to end before its probes go. */
    public void followGraphsInFlight(GraphsInFlight inFlight) {
        synchronized (layer.lock()) {
            this.graphsInFlight = inFlight;
        }
    }

    private GraphsInFlight graphsInFlight = GraphsInFlight.NONE;

    /**
     * The longest a window's last graph is waited for after the window: a prompt's graph on a loaded machine
     * takes seconds, and a graph cut off by the detach is attributed to nothing. It costs the traps of that one
     * graph, which the window began.
     */
    static final long MAX_LAST_GRAPH_MS = 10_000;

    /**
     * Ends a sample window: no graph is sampled from now on, and after {@code graceMs}, or once the CPU graphs in
     * flight then have ended (at most {@link #MAX_LAST_GRAPH_MS}: the graph in flight finishes with its
     * arrivals), the per-thread probes are detached. The detach waits in the kernel, outside the lock. No-op
     * when the layer is off or already paused.
     */
    public void pauseArrivals(long graceMs) throws BpfException {
        GraphsInFlight inFlight;
        synchronized (layer.lock()) {
            if (!layer.wanted() || arrivals.paused()) {
                return;
            }
            control.paused(true);
            control.write(true);
            inFlight = graphsInFlight;
        }
        awaitGraphsEnded(cpuGraphsInFlight(inFlight), inFlight, graceMs);
        List<ProbeLink> closing;
        synchronized (layer.lock()) {
            if (!control.paused()) {
                return; // resumed or re-attached meanwhile
            }
            closing = arrivals.pause();
            layer.linksDetached(closing);
        }
        long startNs = System.nanoTime();
        LinkCloser.closeAll(closing);
        debug("detached", closing, startNs);
    }

    /** Each switch of the per-thread probes' cost on stderr (INFERTOP_DEBUG, as the budget's phases). */
    private static final boolean DEBUG = System.getenv("INFERTOP_DEBUG") != null;

    private static void debug(String what, List<ProbeLink> links, long startNs) {
        if (DEBUG) {
            System.err.println("infertop budget: per-thread probes " + what + " in "
                    + (System.nanoTime() - startNs) / 1_000_000 + " ms (" + links.size() + " links, "
                    + links.stream().mapToInt(ProbeLink::probeCount).sum() + " probes)");
        }
    }

    /**
     * Starts a sample window: the per-thread probes attach again at the sites found before (outside the lock:
     * each attach is a bpf or perf_event_open call), then graphs are sampled from the next one on.
     */
    public void resumeArrivals() throws BpfException {
        List<ArrivalProbes.Site> sites;
        synchronized (layer.lock()) {
            if (!layer.wanted() || !arrivals.paused()) {
                return;
            }
            sites = arrivals.detachedSites();
        }
        // One attach per program and library: one uprobe-multi link each where the kernel has them.
        Map<List<Object>, List<ArrivalProbes.Site>> groups = new LinkedHashMap<>();
        for (ArrivalProbes.Site site : sites) {
            groups.computeIfAbsent(Arrays.asList(site.program, site.library, site.mappedAs), k -> new ArrayList<>())
                    .add(site);
        }
        long startNs = System.nanoTime();
        List<ProbeLink> made = new ArrayList<>();
        Map<ArrivalProbes.Site, ProbeLink> linkOf = new IdentityHashMap<>();
        try {
            for (List<ArrivalProbes.Site> group : groups.values()) {
                ArrivalProbes.Site first = group.getFirst();
                long[] offsets = group.stream().mapToLong(site -> site.fileOffset).toArray();
                List<UprobeLink> links = UprobeLink.attachAll(layer.object(), layer.object().program(first.program),
                        layer.pid(), first.library, first.mappedAs, offsets, false);
                made.addAll(links);
                for (int i = 0; i < group.size(); i++) {
                    linkOf.put(group.get(i), links.size() == group.size() ? links.get(i) : links.getFirst());
                }
            }
        } catch (BpfException | RuntimeException e) {
            LinkCloser.closeAll(made);
            throw e;
        }
        debug("attached", made, startNs);
        synchronized (layer.lock()) {
            if (!layer.wanted() || !arrivals.paused()) {
                LinkCloser.closeAll(made); // the layer went off, or was attached anew, meanwhile
                return;
            }
            for (ArrivalProbes.Site site : sites) {
                site.link = linkOf.get(site);
            }
            layer.linksAttached(made);
            arrivals.resumed();
            control.paused(false);
            control.write(true);
        }
    }

    /** Whether the per-thread probes are detached between sample windows now. */
    public boolean arrivalsPaused() {
        synchronized (layer.lock()) {
            return arrivals.paused();
        }
    }

    /** The CPU graphs in flight now, as (thread, start) pairs. */
    private static java.util.Set<List<Long>> cpuGraphsInFlight(GraphsInFlight inFlight) {
        java.util.Set<List<Long>> graphs = new java.util.HashSet<>();
        inFlight.forEach((cpuPath, tid, startNs, guidHigh, guidLow) -> {
            if (cpuPath) {
                graphs.add(List.of((long) tid, startNs));
            }
        });
        return graphs;
    }

    /** Sleeps {@code graceMs}, then on until none of {@code graphs} is in flight (at most {@link #MAX_LAST_GRAPH_MS}). */
    private static void awaitGraphsEnded(java.util.Set<List<Long>> graphs, GraphsInFlight inFlight, long graceMs) {
        long deadlineNs = System.nanoTime() + MAX_LAST_GRAPH_MS * 1_000_000;
        sleepMs(graceMs);
        while (!graphs.isEmpty() && System.nanoTime() < deadlineNs && !Thread.currentThread().isInterrupted()) {
            graphs.retainAll(cpuGraphsInFlight(inFlight));
            if (!graphs.isEmpty()) {
                sleepMs(10);
            }
        }
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(Math.max(0, ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
