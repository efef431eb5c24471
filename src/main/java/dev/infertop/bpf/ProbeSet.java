package dev.infertop.bpf;

import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.target.CallSite;
import dev.infertop.target.CallSiteScanner;
import dev.infertop.target.ElfFile;
import dev.infertop.target.ElfSymbol;
import dev.infertop.target.MemoryMapping;
import dev.infertop.target.PltResolver;
import dev.infertop.target.ProbePlacement;
import dev.infertop.target.ProbeSite;
import dev.infertop.target.ProcessMaps;
import dev.infertop.target.ScanTimeLimit;
import dev.infertop.target.TargetException;


import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
        String offReason = "";
        boolean wanted;
        boolean blocked;
        final List<ProbeLink> links = new ArrayList<>();
        /** library → probe sites already attached there, by symbol */
        final Map<Path, List<String>> attached = new LinkedHashMap<>();
        final List<String> placements = new ArrayList<>();
        final List<String> failures = new ArrayList<>();
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

    public ProbeSet(BpfObject object, int pid) {
        this.object = object;
        this.pid = pid;
        for (Layer layer : Layer.values()) {
            layers.put(layer, new LayerState());
        }
        this.moePlans = new MoePlans(object);
        // What each layer does around its probes, said once here; enable, disable and attach iterate over it.
        hooks.put(Layer.OPERATOR, new LayerHooks(NOTHING, NOTHING, () -> setOperatorControl(true),
                () -> setOperatorControl(false)));
        // The MoE layer's BPF side numbers a thread's groups by its fused calls; it has no probes of its own.
        hooks.put(Layer.MOE, new LayerHooks(this::requireFusedCalls, NOTHING, () -> moePlans.setEnabled(true),
                () -> moePlans.setEnabled(false)));
        hooks.put(Layer.SCHED, new LayerHooks(NOTHING, () -> {
            if (layers.get(Layer.SCHED).links.isEmpty()) {
                resetSchedState();
            }
        }, NOTHING, NOTHING));
    }

    /** A step of a layer's life that may fail like the BPF calls it makes. */
    @FunctionalInterface
    private interface Step {
        void run() throws BpfException;
    }

    private static final Step NOTHING = () -> { };

    /**
     * What a layer does beyond attaching its probes (htop's MeterClass idea: behaviour as data, not branches):
     * before it is switched on, before its probes attach, once they are attached (or it is switched back on
     * without re-attaching), before they are detached.
     */
    private record LayerHooks(Step beforeEnable, Step beforeAttach, Step afterEnable, Step beforeDisable) {
        static final LayerHooks NONE = new LayerHooks(NOTHING, NOTHING, NOTHING, NOTHING);
    }

    private final Map<Layer, LayerHooks> hooks = new EnumMap<>(Layer.class);

    private LayerHooks hooks(Layer layer) {
        return hooks.getOrDefault(layer, LayerHooks.NONE);
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
                ScanTimeLimit.run(library.toString(), ScanTimeLimit.DEFAULT_LIMIT_MS, () -> {
                    try (ElfFile elf = ElfFile.open(library, mapping)) {
                        PltResolver.of(elf); // the library-wide tables call-site probes read
                        return null;
                    }
                });
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
        hooks(layer).beforeEnable().run();
        LayerState state = layers.get(layer);
        state.wanted = true;
        state.offReason = "";
        Switchable switchable = switchables.get(layer);
        if (switchable != null) {
            switchable.on();
            return;
        }
        attachMissing(layer, state);
        hooks(layer).afterEnable().run();
    }

    /**
     * Sched layer: before its programs attach (again), state from before is dropped: no thread waits, and
     * what threads did before now is not counted (a thread off the CPU across a pause would show the pause).
     */
    private void resetSchedState() throws BpfException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG);
            object.updateElement(InfertopProbes.SCHED_WAITING_MAP, 0, value);
            // SAFETY: System.nanoTime() is CLOCK_MONOTONIC on Linux, the clock of bpf_ktime_get_ns().
            value.set(ValueLayout.JAVA_LONG, 0, System.nanoTime());
            object.updateElement(InfertopProbes.SCHED_EPOCH_MAP, 0, value);
        }
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
        hooks(layer).beforeDisable().run(); // e.g. the operator layer stops reading graphs before its probes go
        detach(state);
    }

    private final MoePlans moePlans;

    /** The MoE layer's plan writer (it has no probes of its own: it copies ids at the operator layer's). */
    public MoePlans moePlans() {
        return moePlans;
    }

    /** Operator layer: trace every Nth graph only (1 = all). Takes effect at the next graph. */
    public synchronized void setOperatorEvery(int every) throws BpfException {
        operatorEvery = Math.max(1, every);
        if (layers.get(Layer.OPERATOR).wanted) {
            setOperatorControl(true);
        }
    }

    private int operatorEvery = 1;
    private boolean filterThreads;

    /** Operator layer: only these threads report (empty: all). Barrier waits are then relative to them. */
    public synchronized void setOperatorThreads(java.util.Collection<Integer> tids) throws BpfException {
        filterThreads = !tids.isEmpty();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment present = arena.allocate(1);
            present.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
            for (int tid : tids) {
                object.updateElement(InfertopProbes.THREAD_FILTER_MAP, tid, present);
            }
        }
        if (layers.get(Layer.OPERATOR).wanted) {
            setOperatorControl(true);
        }
    }

    private void setOperatorControl(boolean enabled) throws BpfException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ControlLayout.OP_CONTROL_SIZE, 4);
            value.set(ValueLayout.JAVA_INT, ControlLayout.OP_CONTROL_ENABLED, enabled ? 1 : 0);
            value.set(ValueLayout.JAVA_INT, ControlLayout.OP_CONTROL_EVERY, operatorEvery);
            value.set(ValueLayout.JAVA_INT, ControlLayout.OP_CONTROL_FILTER_THREADS, filterThreads ? 1 : 0);
            if (enabled) {
                // Forget the last graph read: user space may not hold its nodes any more.
                object.updateElement(InfertopProbes.WALK_MEMO_MAP, 0, arena.allocate(24, 8));
            }
            object.updateElement(InfertopProbes.OP_CONTROL_MAP, 0, value);
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
        hooks(layer).beforeAttach().run();
        if (attachTracepoints(layer, state)) {
            return;
        }
        state.failures.clear();
        // First find every site, then attach: a layer that needs all its required probes attaches nothing
        // while one of them is missing (its other probes would cost time and report nothing).
        Map<ProbeSpec, Map<Path, List<Site>>> plan = new LinkedHashMap<>();
        List<ProbeSpec> missing = new ArrayList<>();
        Set<Path> definingLayerSymbols = new LinkedHashSet<>();
        for (ProbeSpec spec : ProbeSpec.of(layer)) {
            String key = key(spec);
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
                List<Site> sites = findSites(library, mappedAs.get(library), spec, state);
                if (!sites.isEmpty() && leaveFusedCallsUnprobed(spec, library, sites)) {
                    continue;
                }
                if (!sites.isEmpty()) {
                    sitesByLibrary.put(library, sites);
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
            state.failures.add(notFound(spec, definingLayerSymbols));
        }
        if (!missing.isEmpty() && ProbeSpec.needsAllRequired(layer)) {
            return;
        }
        for (Map.Entry<ProbeSpec, Map<Path, List<Site>>> entry : plan.entrySet()) {
            String key = key(entry.getKey());
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
        List<ProbeSpec.TracepointProbe> specs = ProbeSpec.of(layer).stream()
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

    /**
     * Why a required probe has no site. A stripped library (no .symtab) keeps only exported functions, so
     * local ones such as ggml_graph_compute_thread are gone: name it as stripped, preferring the stripped
     * libraries that define the layer's other symbols (where the missing one would have been).
     */
    private String notFound(ProbeSpec spec, Set<Path> definingLayerSymbols) {
        List<Path> stripped = new ArrayList<>();
        for (Path library : definingLayerSymbols.isEmpty() ? libraries : definingLayerSymbols) {
            if (isStripped(library)) {
                stripped.add(library);
            }
        }
        if (stripped.isEmpty() && !definingLayerSymbols.isEmpty()) {
            for (Path library : libraries) {
                if (isStripped(library)) {
                    stripped.add(library);
                }
            }
        }
        if (stripped.isEmpty()) {
            return describe(spec) + " not found in " + describe(libraries);
        }
        return describe(spec) + " not found in " + describe(stripped) + " (stripped: "
                + (stripped.size() == 1 ? "it has" : "they have")
                + " no .symtab; local functions are gone)";
    }

    private boolean isStripped(Path library) {
        try {
            return ScanTimeLimit.run(library.toString(), ScanTimeLimit.DEFAULT_LIMIT_MS, () -> {
                try (ElfFile elf = ElfFile.open(library, mappedAs.get(library))) {
                    return elf.isStripped();
                }
            });
        } catch (TargetException e) {
            return false;
        }
    }

    /** A resolved probe address with the reason it was chosen. */
    private record Site(String what, long fileOffset, String reason, String callee) {
        Site(String what, long fileOffset, String reason) {
            this(what, fileOffset, reason, "");
        }
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
            case ProbeSpec.CallSiteProbe call -> state.links.add(UprobeLink.attach(object.program(call.program()),
                    pid, library, site.fileOffset(), false));
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

    private static String key(ProbeSpec spec) {
        return switch (spec) {
            case ProbeSpec.FunctionProbe f -> "fn:" + f.symbol() + ":" + f.entryProgram();
            case ProbeSpec.CallSiteProbe c -> "call:" + c.caller() + ":" + c.program();
            case ProbeSpec.TracepointProbe t -> "tp:" + t.tracepoint() + ":" + t.program();
        };
    }

    private static String describe(ProbeSpec spec) {
        return switch (spec) {
            case ProbeSpec.FunctionProbe f -> f.symbol();
            case ProbeSpec.CallSiteProbe c -> "calls to " + c.calleeDescription() + " in " + c.caller();
            case ProbeSpec.TracepointProbe t -> "tracepoint " + t.tracepoint();
        };
    }

    private static List<Site> findSites(Path library, MemoryMapping mapping, ProbeSpec spec, LayerState state) {
        try {
            return ScanTimeLimit.run(library.toString(), ScanTimeLimit.DEFAULT_LIMIT_MS,
                    () -> findSitesNow(library, mapping, spec));
        } catch (TargetException e) {
            state.failures.add(e.getMessage());
            return List.of();
        }
    }

    private static List<Site> findSitesNow(Path library, MemoryMapping mapping, ProbeSpec spec)
            throws TargetException {
        try (ElfFile elf = ElfFile.open(library, mapping)) {
            return switch (spec) {
                case ProbeSpec.FunctionProbe f -> {
                    List<ElfSymbol> candidates = f.clones() ? elf.functionAndClones(f.symbol()) : elf.functionsNamed(f.symbol());
                    List<Site> sites = new ArrayList<>();
                    for (ElfSymbol function : candidates) {
                        if (function.sizeBytes() > 0) {
                            ProbeSite site = ProbePlacement.place(elf, function);
                            sites.add(new Site(function.name(), site.fileOffset(), site.reason()));
                            if (!f.clones()) {
                                break;
                            }
                        }
                    }
                    yield sites;
                }
                case ProbeSpec.CallSiteProbe c -> {
                    List<Site> sites = new ArrayList<>();
                    for (ElfSymbol caller : elf.functionAndClones(c.caller())) {
                        if (caller.sizeBytes() == 0) {
                            continue;
                        }
                        List<CallSite> calls = new ArrayList<>(CallSiteScanner.findCallsMatching(elf, caller, c.callee()));
                        calls.sort(java.util.Comparator.comparingLong(CallSite::vaddr));
                        if (c.firstSites() > 0 && calls.size() > c.firstSites()) {
                            calls = calls.subList(0, c.firstSites());
                        }
                        for (CallSite call : calls) {
                            sites.add(new Site(call.calleeName() + " call in " + caller.name(), call.fileOffset(),
                                    call.reason(), call.calleeName()));
                        }
                    }
                    yield sites;
                }
                case ProbeSpec.TracepointProbe t -> List.<Site>of();
            };
        }
    }

    private static String describe(Collection<Path> libraries) {
        if (libraries.isEmpty()) {
            return "any library (none found to probe)";
        }
        List<String> names = libraries.stream().map(p -> p.getFileName().toString()).toList();
        return names.size() <= 4 ? String.join(", ", names) : names.subList(0, 4) + " and " + (names.size() - 4) + " more";
    }

    private static void detach(LayerState state) {
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
            if (entry.getKey() == Layer.MOE && state.wanted) {
                result.add(moeStatus());
                continue;
            }
            List<String> placements = state.placements;
            if (entry.getKey() == Layer.OPERATOR && !state.links.isEmpty() && !fusedCallsNotProbed.isEmpty()) {
                placements = new ArrayList<>(placements);
                placements.addAll(fusedCallsNotProbed);
            }
            result.add(new LayerStatus(entry.getKey(), label, reason, placements));
        }
        return result;
    }

    /** The MoE layer reads ids at the operator layer's barrier probes: it runs when and as that layer does. */
    private LayerStatus moeStatus() {
        LayerState operator = layers.get(Layer.OPERATOR);
        if (!operator.wanted) {
            return new LayerStatus(Layer.MOE, LayerStatus.State.UNAVAILABLE,
                    "needs the operator layer, which is off" + (operator.offReason.isEmpty() ? "" : " (" + operator.offReason + ")"),
                    List.of());
        }
        if (operator.links.isEmpty()) {
            return new LayerStatus(Layer.MOE, LayerStatus.State.UNAVAILABLE,
                    "needs the operator layer: " + String.join("; ", operator.failures), List.of());
        }
        return new LayerStatus(Layer.MOE, LayerStatus.State.ON, "",
                List.of("expert ids copied at the operator layer's barrier probes (no probe of its own)"));
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

    /**
     * A layer with no probes of its own, switched by {@link #enable}/{@link #disable} like the others (the
     * counters layer: perf events read by the operator layer's probes).
     */
    public interface Switchable extends AutoCloseable {
        void on() throws BpfException;

        void off() throws BpfException;

        LayerStatus status(Layer layer, boolean wanted, String offReason, boolean operatorAttached);

        @Override
        void close();
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
