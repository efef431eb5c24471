package dev.infertop.bpf;

import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.target.ElfFile;
import dev.infertop.target.ElfSymbol;
import dev.infertop.target.ProbePlacement;
import dev.infertop.target.ProbeSite;
import dev.infertop.target.TargetException;

import java.lang.foreign.MemorySegment;
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
    private final Map<Layer, LayerState> layers = new EnumMap<>(Layer.class);

    private static final class LayerState {
        boolean wanted;
        final List<UprobeLink> links = new ArrayList<>();
        /** library → probe sites already attached there, by symbol */
        final Map<Path, List<String>> attached = new LinkedHashMap<>();
        final List<String> placements = new ArrayList<>();
        final List<String> failures = new ArrayList<>();
    }

    public ProbeSet(BpfObject object, int pid) {
        this.object = object;
        this.pid = pid;
        for (Layer layer : Layer.values()) {
            layers.put(layer, new LayerState());
        }
    }

    /** Adds candidate libraries and attaches every wanted layer to those that define its symbols. */
    public synchronized void addLibraries(Collection<Path> candidates) throws BpfException {
        boolean changed = false;
        for (Path library : candidates) {
            changed |= libraries.add(library);
        }
        if (changed) {
            for (Map.Entry<Layer, LayerState> entry : layers.entrySet()) {
                if (entry.getValue().wanted) {
                    attachMissing(entry.getKey(), entry.getValue());
                }
            }
        }
    }

    public synchronized void enable(Layer layer) throws BpfException {
        LayerState state = layers.get(layer);
        state.wanted = true;
        attachMissing(layer, state);
    }

    public synchronized void disable(Layer layer) {
        LayerState state = layers.get(layer);
        state.wanted = false;
        detach(state);
    }

    public synchronized boolean isEnabled(Layer layer) {
        return layers.get(layer).wanted;
    }

    public synchronized int attachedProbeCount() {
        return layers.values().stream().mapToInt(s -> s.links.size()).sum();
    }

    private void attachMissing(Layer layer, LayerState state) throws BpfException {
        state.failures.clear();
        for (ProbeSpec spec : ProbeSpec.of(layer)) {
            boolean found = state.attached.values().stream().anyMatch(symbols -> symbols.contains(spec.symbol()));
            for (Path library : libraries) {
                List<String> done = state.attached.computeIfAbsent(library, l -> new ArrayList<>());
                if (done.contains(spec.symbol())) {
                    continue;
                }
                ProbeSite site = findSite(library, spec.symbol(), state);
                if (site == null) {
                    continue;
                }
                MemorySegment entry = object.program(spec.entryProgram());
                MemorySegment exit = object.program(spec.exitProgram());
                // Return probe first: an entry record with no return probe yet would wait in the map forever.
                state.links.add(UprobeLink.attach(exit, pid, library, site.fileOffset(), true));
                state.links.add(UprobeLink.attach(entry, pid, library, site.fileOffset(), false));
                done.add(spec.symbol());
                state.placements.add(spec.symbol() + " @ " + library.getFileName() + "+0x"
                        + Long.toHexString(site.fileOffset()) + ": " + site.reason());
                found = true;
            }
            if (!found) {
                state.failures.add(spec.symbol() + " not found in " + describe(libraries));
            }
        }
    }

    private static ProbeSite findSite(Path library, String symbol, LayerState state) {
        try (ElfFile elf = ElfFile.open(library)) {
            List<ElfSymbol> functions = elf.functionsNamed(symbol);
            for (ElfSymbol function : functions) {
                if (function.sizeBytes() > 0) {
                    return ProbePlacement.place(elf, function);
                }
            }
            return null;
        } catch (TargetException e) {
            state.failures.add(e.getMessage());
            return null;
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
        for (UprobeLink link : state.links) {
            link.close();
        }
        state.links.clear();
        state.attached.clear();
        state.placements.clear();
        state.failures.clear();
    }

    public synchronized List<LayerStatus> statuses() {
        List<LayerStatus> result = new ArrayList<>();
        for (Map.Entry<Layer, LayerState> entry : layers.entrySet()) {
            LayerState state = entry.getValue();
            LayerStatus.State label;
            String reason = String.join("; ", state.failures);
            if (!state.wanted) {
                label = LayerStatus.State.OFF;
                reason = "";
            } else if (state.links.isEmpty()) {
                label = LayerStatus.State.UNAVAILABLE;
            } else if (!state.failures.isEmpty()) {
                label = LayerStatus.State.PARTIAL;
            } else {
                label = LayerStatus.State.ON;
            }
            result.add(new LayerStatus(entry.getKey(), label, reason, state.placements));
        }
        return result;
    }

    @Override
    public synchronized void close() {
        for (LayerState state : layers.values()) {
            detach(state);
        }
    }
}
