package dev.infertop.bpf;

import dev.infertop.bpf.ProbeSites.Site;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.process.MappedFile;
import dev.infertop.process.MemoryMapping;
import dev.infertop.process.ProcessMaps;
import dev.infertop.process.ScanTimeLimit;
import dev.infertop.process.TargetException;

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
 * Each layer is its {@link ProbeLayer} description: this class iterates over them and names none; what a layer
 * does besides attaching its probes is its {@link KernelSide}, called under this set's one lock (which also
 * guards every layer's state, so a library added late attaches every wanted layer under it).
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

    private final class LayerState implements KernelSide.LayerHandle {
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

        LayerState(ProbeLayer description) {
            this.description = description;
            this.kernel = description.kernelSide().create(this);
        }

        @Override
        public Object lock() {
            return ProbeSet.this;
        }

        @Override
        public BpfObject object() {
            return object;
        }

        @Override
        public int pid() {
            return pid;
        }

        @Override
        public boolean wanted() {
            return wanted;
        }

        @Override
        public void linksAttached(List<ProbeLink> made) {
            links.addAll(made);
        }

        @Override
        public void linksDetached(List<ProbeLink> taken) {
            links.removeAll(taken);
        }

        @Override
        public void attachMissingIfWanted() throws BpfException {
            if (wanted && switchables.get(description.layer()) == null) {
                attachMissing(this);
            }
        }
    }

    /** Where probes go in each library: read once per library, and cached by the session when it chooses. */
    private final SiteFinder sites;

    public ProbeSet(BpfObject object, int pid) {
        this(object, pid, SiteFinder.uncached());
    }

    public ProbeSet(BpfObject object, int pid, SiteFinder sites) {
        this.object = object;
        this.pid = pid;
        this.sites = sites;
        for (Layer layer : Layer.values()) {
            layers.put(layer, new LayerState(ProbeLayer.of(layer)));
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
            // The maps print a file under its name of the moment: a library named at an earlier reading is
            // found by that name, else by the file its name resolves to now (never opened: an O_PATH look). A
            // name that resolves to no regular file is skipped here: it is no library the process can run.
            MemoryMapping mapping = mappings.stream().filter(m -> m.path().equals(library.toString())).findFirst()
                    .orElse(null);
            if (mapping == null) {
                try {
                    mapping = MappedFile.mappingNamedBy(library, mappings).orElse(null);
                } catch (java.nio.file.FileSystemException e) {
                    String why = library + ": " + e.getReason();
                    skipped.put(library, why);
                    skippedNow.add("infertop: skipped a library: " + why);
                    continue;
                }
            }
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
            for (LayerState state : layers.values()) {
                if (state.wanted) {
                    attachMissing(state);
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
     * The layer's own operations besides switching it (the operator layer's sample windows, the MoE layer's
     * plans): the kernel side its {@link ProbeLayer} registers, as {@code type}.
     */
    public synchronized <T extends KernelSide> T kernelSide(Layer layer, Class<T> type) {
        return type.cast(layers.get(layer).kernel);
    }

    public synchronized void enable(Layer layer) throws BpfException {
        LayerState state = layers.get(layer);
        if (state.description.needs() != null) {
            layers.get(state.description.needs()).kernel.neededBy(state.description);
        }
        state.kernel.beforeEnable();
        state.wanted = true;
        state.offReason = "";
        Switchable switchable = switchables.get(layer);
        if (switchable != null) {
            switchable.on();
            return;
        }
        attachMissing(state);
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

    public synchronized boolean isEnabled(Layer layer) {
        return layers.get(layer).wanted;
    }

    public synchronized int attachedProbeCount() {
        return layers.values().stream().flatMap(s -> s.links.stream()).mapToInt(ProbeLink::probeCount).sum();
    }

    private void attachMissing(LayerState state) throws BpfException {
        if (state.blocked) {
            return;
        }
        if (state.links.isEmpty()) {
            state.kernel.beforeFirstAttach();
        }
        if (attachTracepoints(state)) {
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
                if (!librarySites.isEmpty() && state.kernel.leaveUnprobed(spec, library, librarySites)) {
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
        // Each program's sites in one library, whichever probes they are of, attach together: one uprobe-multi
        // link where the kernel has them. Return probes first: an entry record with no return probe yet would
        // wait in the map forever.
        Map<ProgramInFile, List<Site>> returns = new LinkedHashMap<>();
        Map<ProgramInFile, List<Site>> entries = new LinkedHashMap<>();
        for (Map.Entry<ProbeSpec, Map<Path, List<Site>>> entry : plan.entrySet()) {
            for (Map.Entry<Path, List<Site>> library : entry.getValue().entrySet()) {
                Path file = library.getKey();
                switch (entry.getKey()) {
                    case ProbeSpec.FunctionProbe function -> {
                        if (function.exitProgram() != null) {
                            returns.computeIfAbsent(new ProgramInFile(function.exitProgram(), file, false),
                                    k -> new ArrayList<>()).addAll(library.getValue());
                        }
                        entries.computeIfAbsent(new ProgramInFile(function.entryProgram(), file, false),
                                k -> new ArrayList<>()).addAll(library.getValue());
                    }
                    case ProbeSpec.CallSiteProbe call -> entries.computeIfAbsent(
                            new ProgramInFile(call.program(), file, true), k -> new ArrayList<>())
                            .addAll(library.getValue());
                    case ProbeSpec.TracepointProbe tracepoint -> throw new IllegalStateException(
                            "tracepoint " + tracepoint.tracepoint() + " has no library site");
                }
            }
        }
        for (Map.Entry<ProgramInFile, List<Site>> group : returns.entrySet()) {
            attach(state, group.getKey(), group.getValue(), true);
        }
        for (Map.Entry<ProgramInFile, List<Site>> group : entries.entrySet()) {
            attach(state, group.getKey(), group.getValue(), false);
        }
        for (Map.Entry<ProbeSpec, Map<Path, List<Site>>> entry : plan.entrySet()) {
            String key = ProbeSites.key(entry.getKey());
            boolean withReturn = entry.getKey() instanceof ProbeSpec.FunctionProbe function
                    && function.exitProgram() != null;
            for (Map.Entry<Path, List<Site>> library : entry.getValue().entrySet()) {
                for (Site site : library.getValue()) {
                    state.placements.add(site.what() + (withReturn ? " (entry and return)" : "") + " @ "
                            + library.getKey().getFileName() + "+0x" + Long.toHexString(site.fileOffset()) + ": "
                            + site.reason());
                }
                state.attached.computeIfAbsent(library.getKey(), l -> new ArrayList<>()).add(key);
            }
        }
    }

    /** One program's probes in one library; {@code callSites}: the layer's kernel side hears of each site. */
    private record ProgramInFile(String program, Path library, boolean callSites) {}

    /**
     * A layer of tracepoint programs (the sched layer) needs no library: all its programs are attached once,
     * or none (one without the other would report half a picture). Returns whether the layer is such a layer.
     */
    private boolean attachTracepoints(LayerState state) {
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

    /** Attaches a program at its sites in one library: one link where uprobe-multi links are used. */
    private void attach(LayerState state, ProgramInFile where, List<Site> librarySites, boolean retprobe)
            throws BpfException {
        long[] offsets = librarySites.stream().mapToLong(Site::fileOffset).toArray();
        MemoryMapping mapping = mappedAs.get(where.library());
        List<UprobeLink> made = UprobeLink.attachAll(object, object.program(where.program()), pid, where.library(),
                mapping, offsets, retprobe);
        state.links.addAll(made);
        if (where.callSites()) {
            for (int i = 0; i < offsets.length; i++) {
                // one link per site, or one for them all
                ProbeLink link = made.size() == offsets.length ? made.get(i) : made.getFirst();
                state.kernel.attachedCallSite(where.program(), where.library(), mapping, offsets[i], link);
            }
        }
    }

    private void detach(LayerState state) {
        state.kernel.detached();
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
                        other -> !layers.get(other).links.isEmpty()));
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
                result.add(borrowedStatus(state));
                continue;
            }
            List<String> placements = state.placements;
            if (!state.links.isEmpty() && !state.kernel.notes().isEmpty()) {
                placements = new ArrayList<>(placements);
                placements.addAll(state.kernel.notes());
            }
            result.add(new LayerStatus(entry.getKey(), label, reason, placements));
        }
        return result;
    }

    /**
     * A layer that reads at the probes of the layer it needs (the MoE layer reads ids at the operator layer's
     * barrier probes): it runs when and as that layer does; its own optional probes' placements follow its note.
     */
    private LayerStatus borrowedStatus(LayerState state) {
        ProbeLayer description = state.description;
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
        List<String> lines = new ArrayList<>(List.of(description.borrowedNote()));
        lines.addAll(state.placements);
        return new LayerStatus(description.layer(), LayerStatus.State.ON, "", lines);
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
