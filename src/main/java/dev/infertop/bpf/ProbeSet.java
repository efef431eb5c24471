package dev.infertop.bpf;

import dev.infertop.bpf.ProbeSites.Site;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.target.MemoryMapping;
import dev.infertop.target.ProcessMaps;
import dev.infertop.target.ScanTimeLimit;
import dev.infertop.target.TargetException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/*
 * Over 500 lines (about 615), knowingly: one lock guards the libraries, every layer's state, the fused-call
 * policy, the switchable layers and the budget's sample windows (their detach and attach run outside it, and
 * must re-check the layer's state under it on both sides), and a library added late must attach every wanted
 * layer under it. What reads ELF files (ProbeSites, SiteFinder), what writes control maps (OperatorControl) and
 * which sites the windows switch (ArrivalProbes) is already out.
 */

/**
 * The probes of each layer, attached to the libraries that define their symbols. Libraries can be added at
 * any time (a backend dlopen'ed late); layers can be detached and re-attached live. Closing detaches all.
 * A layer whose symbols exist in no library is reported UNAVAILABLE with the reason; the others still run.
 */
public final class ProbeSet implements AutoCloseable {
    private final BpfObject object;
    private final int pid;
    private final Set<Path> libraries = new LinkedHashSet<>();
    /** Each library's mapping in the target, when it has one: the file opened must be that very file. */
    private final Map<Path, MemoryMapping> mappedAs = new java.util.HashMap<>();
    /** Libraries refused (not a regular file, replaced, corrupt, too slow to read), with why. */
    private final Map<Path, String> skipped = new LinkedHashMap<>();
    private final Map<Layer, LayerState> layers = new EnumMap<>(Layer.class);

    private static final class LayerState {
        final ProbeLayer description;
        /** What the layer switches in the kernel besides its probes. */
        final KernelSide kernel;
        String offReason = "";
        boolean wanted;
        boolean blocked;
        final List<ProbeLink> links = new ArrayList<>();
        /** library → probe sites already attached there, by symbol */
        final Map<Path, List<String>> attached = new LinkedHashMap<>();
        final List<String> placements = new ArrayList<>();
        final List<String> failures = new ArrayList<>();

        LayerState(ProbeLayer description, KernelSide kernel) {
            this.description = description;
            this.kernel = kernel;
        }
    }

    /**
     * What a layer switches in the kernel besides attaching its probes (a control map, MoE plans, stale state
     * to drop); registered once per layer in the constructor, called by {@link #enable}, {@link #disable} and
     * the attach.
     */
    private interface KernelSide {
        KernelSide NONE = new KernelSide() {};

        /** Before the layer is marked wanted (and its probes attach). */
        default void beforeEnable() throws BpfException {}

        /** Once its probes are attached after {@link #enable}. */
        default void afterEnable() throws BpfException {}

        /** Before its probes are detached by {@link #disable}. */
        default void beforeDisable() throws BpfException {}

        /** Before its probes attach while none is attached. */
        default void beforeFirstAttach() throws BpfException {}
    }

    /**
     * Whether the fused-op call sites' libraries' fused ops can be worked out from the graph instead (given
     * the fused functions' names; see FusionPatterns); null: always probe them.
     */
    private java.util.function.Predicate<List<String>> fusionInferable;
    /** The fused calls are probed whatever the names say: the MoE layer numbers groups from them, or asked. */
    private boolean fusedCallsRequired;
    /** Fused-op call sites found and left unprobed, as placement-like lines (the operator layer's status). */
    private final List<String> fusedCallsNotProbed = new ArrayList<>();

    /** Where probes go in each library: read once per library, and cached by the session when it chooses. */
    private final SiteFinder sites;

    public ProbeSet(BpfObject object, int pid) {
        this(object, pid, SiteFinder.uncached());
    }

    public ProbeSet(BpfObject object, int pid, SiteFinder sites) {
        this.object = object;
        this.pid = pid;
        this.sites = sites;
        this.moePlans = new MoePlans(object);
        this.operatorControl = new OperatorControl(object);
        Map<Layer, KernelSide> kernelSides = new EnumMap<>(Layer.class);
        kernelSides.put(Layer.OPERATOR, new KernelSide() {
            @Override
            public void afterEnable() throws BpfException {
                operatorControl.write(true);
            }

            @Override
            public void beforeDisable() throws BpfException {
                operatorControl.write(false); // stop reading graphs before the probes go
            }
        });
        kernelSides.put(Layer.MOE, new KernelSide() {
            @Override
            public void beforeEnable() throws BpfException {
                requireFusedCalls(); // the MoE layer's BPF side numbers a thread's groups by its fused calls
            }

            @Override
            public void afterEnable() throws BpfException {
                moePlans.setEnabled(true);
            }

            @Override
            public void beforeDisable() throws BpfException {
                moePlans.setEnabled(false);
            }
        });
        kernelSides.put(Layer.SCHED, new KernelSide() {
            @Override
            public void beforeFirstAttach() throws BpfException {
                OperatorControl.resetSched(object);
            }
        });
        for (Layer layer : Layer.values()) {
            layers.put(layer, new LayerState(ProbeLayer.of(layer), kernelSides.getOrDefault(layer, KernelSide.NONE)));
        }
    }

    /**
     * Adds candidate libraries and attaches every wanted layer to those that define its symbols. A candidate
     * that cannot be read safely (not a regular file, no longer the file the target mapped, a corrupt ELF, or
     * one that takes longer than {@link ScanTimeLimit#DEFAULT_LIMIT_MS} to read) is skipped for good: the
     * returned lines, one per library skipped now, say which and why.
     */
    public synchronized List<String> addLibraries(Collection<Path> candidates) throws BpfException {
        boolean changed = false;
        List<String> skippedNow = new ArrayList<>();
        List<MemoryMapping> mappings = null;
        for (Path library : candidates) {
            if (libraries.contains(library) || skipped.containsKey(library)) {
                continue;
            }
            if (mappings == null) {
                mappings = mappedLibraries();
            }
            MemoryMapping mapping = mappings.stream().filter(m -> m.path().equals(library.toString())).findFirst()
                    .orElse(null);
            try {
                sites.admit(library, mapping);
            } catch (TargetException e) {
                skipped.put(library, e.getMessage());
                skippedNow.add("infertop: skipped a library: " + e.getMessage());
                continue;
            }
            if (mapping != null) {
                mappedAs.put(library, mapping);
            }
            changed |= libraries.add(library);
        }
        if (changed) {
            for (Map.Entry<Layer, LayerState> entry : layers.entrySet()) {
                if (entry.getValue().wanted) {
                    attachMissing(entry.getKey(), entry.getValue());
                }
            }
        }
        return skippedNow;
    }

    /** The libraries the target maps now (none when its maps cannot be read: then no identity is checked). */
    private List<MemoryMapping> mappedLibraries() {
        try {
            return ProcessMaps.of(pid).mappedLibraries();
        } catch (TargetException e) {
            return List.of();
        }
    }

    /**
     * From now on the operator layer leaves a library's fused-op calls unprobed when {@code inferable} says
     * their functions' fused ops can be worked out from the graph (set before the layer attaches).
     */
    public synchronized void inferFusedCalls(java.util.function.Predicate<List<String>> inferable) {
        this.fusionInferable = inferable;
    }

    /** Probes the fused-op calls from now on (attaching them now if the operator layer is on). */
    public synchronized void requireFusedCalls() throws BpfException {
        if (fusedCallsRequired) {
            return;
        }
        fusedCallsRequired = true;
        LayerState operator = layers.get(Layer.OPERATOR);
        fusedCallsNotProbed.clear();
        if (operator.wanted && switchables.get(Layer.OPERATOR) == null) {
            attachMissing(Layer.OPERATOR, operator);
        }
    }

    /** Whether fused-op call sites were found and left unprobed (their groups are inferred from the graph). */
    public synchronized boolean fusedCallsInferred() {
        return !fusedCallsNotProbed.isEmpty();
    }

    public synchronized void enable(Layer layer) throws BpfException {
        LayerState state = layers.get(layer);
        state.kernel.beforeEnable();
        state.wanted = true;
        state.offReason = "";
        Switchable switchable = switchables.get(layer);
        if (switchable != null) {
            switchable.on();
            return;
        }
        attachMissing(layer, state);
        state.kernel.afterEnable();
    }

    public synchronized void disable(Layer layer) throws BpfException {
        disable(layer, "");
    }

    /** Detaches the layer's probes; {@code why} is shown as the OFF layer's reason. */
    public synchronized void disable(Layer layer, String why) throws BpfException {
        LayerState state = layers.get(layer);
        state.wanted = false;
        state.offReason = why;
        Switchable switchable = switchables.get(layer);
        if (switchable != null) {
            switchable.off();
            return;
        }
        state.kernel.beforeDisable();
        detach(state);
    }

    private final MoePlans moePlans;
    private final OperatorControl operatorControl;
    /** The operator layer's per-thread probes, detached between the overhead budget's sample windows. */
    private final ArrivalProbes arrivals = new ArrivalProbes();

    /**
     * Ends a sample window: no graph is sampled from now on, and after {@code graceMs} (the graph in flight
     * finishes with its arrivals) the per-thread probes are detached. The detach waits in the kernel, outside
     * the lock. No-op when the operator layer is off or already paused.
     */
    public void pauseArrivals(long graceMs) throws BpfException {
        synchronized (this) {
            if (!layers.get(Layer.OPERATOR).wanted || arrivals.paused()) {
                return;
            }
            operatorControl.paused(true);
            operatorControl.write(true);
        }
        sleepMs(graceMs);
        List<ProbeLink> closing;
        synchronized (this) {
            if (!operatorControl.paused()) {
                return; // resumed or re-attached meanwhile
            }
            closing = arrivals.pause();
            layers.get(Layer.OPERATOR).links.removeAll(closing);
        }
        LinkCloser.closeAll(closing);
    }

    /**
     * Starts a sample window: the per-thread probes attach again at the sites found before (outside the lock:
     * each attach is a perf event open), then graphs are sampled from the next one on.
     */
    public void resumeArrivals() throws BpfException {
        List<ArrivalProbes.Site> sites;
        synchronized (this) {
            if (!layers.get(Layer.OPERATOR).wanted || !arrivals.paused()) {
                return;
            }
            sites = arrivals.detachedSites();
        }
        List<ProbeLink> made = new ArrayList<>();
        try {
            for (ArrivalProbes.Site site : sites) {
                made.add(UprobeLink.attach(object.program(site.program), pid, site.library, site.fileOffset, false));
            }
        } catch (BpfException e) {
            LinkCloser.closeAll(made);
            throw e;
        }
        synchronized (this) {
            if (!layers.get(Layer.OPERATOR).wanted || !arrivals.paused()) {
                LinkCloser.closeAll(made); // the layer went off, or was attached anew, meanwhile
                return;
            }
            for (int i = 0; i < sites.size(); i++) {
                sites.get(i).link = made.get(i);
            }
            layers.get(Layer.OPERATOR).links.addAll(made);
            arrivals.resumed();
            operatorControl.paused(false);
            operatorControl.write(true);
        }
    }

    /** Whether the per-thread probes are detached between sample windows now. */
    public synchronized boolean arrivalsPaused() {
        return arrivals.paused();
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(Math.max(0, ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The MoE layer's plan writer (it has no probes of its own: it copies ids at the operator layer's). */
    public MoePlans moePlans() {
        return moePlans;
    }

    /** Operator layer: trace every Nth graph only (1 = all). Takes effect at the next graph. */
    public synchronized void setOperatorEvery(int every) throws BpfException {
        operatorControl.every(every);
        if (layers.get(Layer.OPERATOR).wanted) {
            operatorControl.write(true);
        }
    }

    /** Operator layer: only these threads report (empty: all). Barrier waits are then relative to them. */
    public synchronized void setOperatorThreads(Collection<Integer> tids) throws BpfException {
        operatorControl.threads(tids);
        if (layers.get(Layer.OPERATOR).wanted) {
            operatorControl.write(true);
        }
    }

    public synchronized boolean isEnabled(Layer layer) {
        return layers.get(layer).wanted;
    }

    public synchronized int attachedProbeCount() {
        return layers.values().stream().mapToInt(s -> s.links.size()).sum();
    }

    private void attachMissing(Layer layer, LayerState state) throws BpfException {
        if (state.blocked) {
            return;
        }
        if (state.links.isEmpty()) {
            state.kernel.beforeFirstAttach();
        }
        if (attachTracepoints(layer, state)) {
            return;
        }
        state.failures.clear();
        // First find every site, then attach: a layer that needs all its required probes attaches nothing
        // while one of them is missing (its other probes would cost time and report nothing).
        Map<ProbeSpec, Map<Path, List<Site>>> plan = new LinkedHashMap<>();
        List<ProbeSpec> missing = new ArrayList<>();
        Set<Path> definingLayerSymbols = new LinkedHashSet<>();
        for (ProbeSpec spec : state.description.probes()) {
            String key = ProbeSites.key(spec);
            boolean found = false;
            for (Map.Entry<Path, List<String>> done : state.attached.entrySet()) {
                if (done.getValue().contains(key)) {
                    found = true;
                    definingLayerSymbols.add(done.getKey());
                }
            }
            Map<Path, List<Site>> sitesByLibrary = new LinkedHashMap<>();
            for (Path library : libraries) {
                if (state.attached.getOrDefault(library, List.of()).contains(key)) {
                    continue;
                }
                List<Site> librarySites = sites.find(library, mappedAs.get(library), spec, state.failures);
                if (!librarySites.isEmpty() && leaveFusedCallsUnprobed(spec, library, librarySites)) {
                    continue;
                }
                if (!librarySites.isEmpty()) {
                    sitesByLibrary.put(library, librarySites);
                    definingLayerSymbols.add(library);
                    found = true;
                }
            }
            plan.put(spec, sitesByLibrary);
            if (!found && !spec.optional()) {
                missing.add(spec);
            }
        }
        for (ProbeSpec spec : missing) {
            state.failures.add(ProbeSites.notFound(spec, definingLayerSymbols, libraries, mappedAs));
        }
        if (!missing.isEmpty() && state.description.allOrNothing()) {
            return;
        }
        String noneOf = ProbeSites.noneOfFound(state.description.probes(), plan, state.attached.values());
        if (noneOf != null) {
            state.failures.add(noneOf);
            return;
        }
        for (Map.Entry<ProbeSpec, Map<Path, List<Site>>> entry : plan.entrySet()) {
            String key = ProbeSites.key(entry.getKey());
            for (Map.Entry<Path, List<Site>> library : entry.getValue().entrySet()) {
                for (Site site : library.getValue()) {
                    attach(state, entry.getKey(), library.getKey(), site);
                }
                state.attached.computeIfAbsent(library.getKey(), l -> new ArrayList<>()).add(key);
            }
        }
    }

    /**
     * A layer of tracepoint programs (the sched layer) needs no library: all its programs are attached once,
     * or none (one without the other would report half a picture). Returns whether the layer is such a layer.
     */
    private boolean attachTracepoints(Layer layer, LayerState state) {
        List<ProbeSpec.TracepointProbe> specs = state.description.probes().stream()
                .filter(ProbeSpec.TracepointProbe.class::isInstance).map(ProbeSpec.TracepointProbe.class::cast)
                .toList();
        if (specs.isEmpty()) {
            return false;
        }
        if (!state.links.isEmpty()) {
            return true;
        }
        state.failures.clear();
        try {
            for (ProbeSpec.TracepointProbe spec : specs) {
                state.links.add(TracepointLink.attach(object.program(spec.program()), spec.tracepoint()));
                state.placements.add("tracepoint " + spec.tracepoint() + " (tp_btf, every CPU; the program keeps "
                        + "only pid " + pid + "'s threads and the tasks that delay them)");
            }
        } catch (BpfException e) {
            detach(state);
            state.failures.add(e.getMessage());
        }
        return true;
    }

    private void attach(LayerState state, ProbeSpec spec, Path library, Site site) throws BpfException {
        switch (spec) {
            case ProbeSpec.FunctionProbe function -> {
                if (function.exitProgram() != null) {
                    // Return probe first: an entry record with no return probe yet would wait in the map forever.
                    state.links.add(UprobeLink.attach(object.program(function.exitProgram()), pid, library,
                            site.fileOffset(), true));
                }
                state.links.add(UprobeLink.attach(object.program(function.entryProgram()), pid, library,
                        site.fileOffset(), false));
            }
            case ProbeSpec.CallSiteProbe call -> {
                ProbeLink link = UprobeLink.attach(object.program(call.program()), pid, library, site.fileOffset(),
                        false);
                state.links.add(link);
                if (ArrivalProbes.isArrivalProgram(call.program())) {
                    arrivals.attached(call.program(), library, site.fileOffset(), link);
                }
            }
            case ProbeSpec.TracepointProbe tracepoint -> throw new IllegalStateException(
                    "tracepoint " + tracepoint.tracepoint() + " has no library site");
        }
        boolean withReturn = spec instanceof ProbeSpec.FunctionProbe function && function.exitProgram() != null;
        state.placements.add(site.what() + (withReturn ? " (entry and return)" : "") + " @ " + library.getFileName()
                + "+0x" + Long.toHexString(site.fileOffset()) + ": " + site.reason());
    }

    /**
     * Whether these are fused-op call sites whose fused ops the operator layer can work out from the graph
     * (then they cost a trap per fused call per thread for nothing): noted, and left unprobed.
     */
    private boolean leaveFusedCallsUnprobed(ProbeSpec spec, Path library, List<Site> sites) {
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

    private void detach(LayerState state) {
        if (state == layers.get(Layer.OPERATOR)) {
            arrivals.forget();
            operatorControl.paused(false);
        }
        LinkCloser.closeAll(state.links);
        state.links.clear();
        state.attached.clear();
        state.placements.clear();
        if (!state.blocked) {
            state.failures.clear();
        }
    }

    /** The layers as they were when the set was closed: what the final snapshot reports. */
    private List<LayerStatus> statusesAtClose;

    public synchronized List<LayerStatus> statuses() {
        if (statusesAtClose != null) {
            return statusesAtClose;
        }
        List<LayerStatus> result = new ArrayList<>();
        for (Map.Entry<Layer, LayerState> entry : layers.entrySet()) {
            LayerState state = entry.getValue();
            Switchable switchable = switchables.get(entry.getKey());
            if (switchable != null) {
                result.add(switchable.status(entry.getKey(), state.wanted, state.offReason,
                        !layers.get(Layer.OPERATOR).links.isEmpty()));
                continue;
            }
            LayerStatus.State label;
            String reason = String.join("; ", state.failures);
            if (!state.wanted) {
                label = LayerStatus.State.OFF;
                reason = state.offReason;
            } else if (state.links.isEmpty()) {
                label = LayerStatus.State.UNAVAILABLE;
            } else if (!state.failures.isEmpty()) {
                label = LayerStatus.State.PARTIAL;
            } else {
                label = LayerStatus.State.ON;
            }
            if (state.description.borrowsProbes() && state.wanted) {
                result.add(borrowedStatus(state.description));
                continue;
            }
            List<String> placements = state.placements;
            if (probesFusedCalls(state.description) && !state.links.isEmpty() && !fusedCallsNotProbed.isEmpty()) {
                placements = new ArrayList<>(placements);
                placements.addAll(fusedCallsNotProbed);
            }
            result.add(new LayerStatus(entry.getKey(), label, reason, placements));
        }
        return result;
    }

    /**
     * A layer with no probes of its own (the MoE layer reads ids at the operator layer's barrier probes): it
     * runs when and as the layer it needs does.
     */
    private LayerStatus borrowedStatus(ProbeLayer description) {
        LayerState needed = layers.get(description.needs());
        String name = "needs the " + description.needs().id() + " layer";
        if (!needed.wanted) {
            return new LayerStatus(description.layer(), LayerStatus.State.UNAVAILABLE,
                    name + ", which is off" + (needed.offReason.isEmpty() ? "" : " (" + needed.offReason + ")"),
                    List.of());
        }
        if (needed.links.isEmpty()) {
            return new LayerStatus(description.layer(), LayerStatus.State.UNAVAILABLE,
                    name + ": " + String.join("; ", needed.failures), List.of());
        }
        return new LayerStatus(description.layer(), LayerStatus.State.ON, "", List.of(description.borrowedNote()));
    }

    /** Whether the layer's probes include the fused-op calls (whose unprobed sites its status lists). */
    private static boolean probesFusedCalls(ProbeLayer description) {
        return description.probes().stream().anyMatch(spec -> spec instanceof ProbeSpec.CallSiteProbe call
                && call.program().equals(ProbeSpec.FUSED_CALL_PROGRAM));
    }

    @Override
    public synchronized void close() {
        if (statusesAtClose == null) {
            // A quit detaches before the collector's last snapshot: that snapshot says what ran, not "unavailable".
            statusesAtClose = List.copyOf(statuses());
        }
        for (Switchable switchable : switchables.values()) {
            switchable.close();
        }
        List<ProbeLink> all = new ArrayList<>();
        for (LayerState state : layers.values()) {
            all.addAll(state.links);
        }
        LinkCloser.closeAll(all); // every layer's links at once
        for (LayerState state : layers.values()) {
            detach(state);
        }
    }

    private final Map<Layer, Switchable> switchables = new EnumMap<>(Layer.class);

    /** Makes {@code layer} switch {@code switchable}; closed with this set. */
    public synchronized void addSwitchable(Layer layer, Switchable switchable) {
        switchables.put(layer, switchable);
    }

    /** Layers that can be switched at run time need their probes' symbols; the operator layer also a layout. */
    public synchronized void markUnavailable(Layer layer, String reason) {
        LayerState state = layers.get(layer);
        detach(state);
        state.wanted = true;
        state.failures.add(reason);
        state.blocked = true;
    }
}
