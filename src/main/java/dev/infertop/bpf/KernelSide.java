package dev.infertop.bpf;

import dev.infertop.process.MemoryMapping;
import dev.infertop.bpf.ProbeSites.Site;

import java.nio.file.Path;
import java.util.List;

/**
 * What a layer does in the kernel besides attaching its probes (a control map, MoE plans, stale state to drop),
 * and what it decides about its own probes (sites it leaves unprobed, sites it switches later). Each layer's
 * {@link ProbeLayer} names the factory; {@link ProbeSet} makes one per layer and calls these hooks under its
 * lock, so that it branches on no particular layer. The session reaches a layer's own operations (the operator
 * layer's sample windows, the MoE layer's plans) through {@link ProbeSet#kernelSide}.
 */
public interface KernelSide {
    KernelSide NONE = new KernelSide() {};

    /** Makes a layer's kernel side over its state in a probe set. */
    @FunctionalInterface
    interface Factory {
        Factory NONE = layer -> KernelSide.NONE;

        KernelSide create(LayerHandle layer);
    }

    /**
     * What a kernel side may do with its layer in the probe set. Every call but {@link #lock} expects that lock
     * held.
     */
    interface LayerHandle {
        /** The probe set's lock, which guards every layer's state. */
        Object lock();

        BpfObject object();

        int pid();

        /** Whether the layer is wanted on (enabled, or marked unavailable). */
        boolean wanted();

        /** Links the side attached itself (outside the probe set's attach), now the layer's. */
        void linksAttached(List<ProbeLink> links);

        /** Links the side takes from the layer, to close them itself. */
        void linksDetached(List<ProbeLink> links);

        /** Attaches what the layer lacks, if it is wanted and has probes of its own (not a switchable's). */
        void attachMissingIfWanted() throws BpfException;
    }

    /** Before the layer is marked wanted (and its probes attach). */
    default void beforeEnable() throws BpfException {}

    /** Once its probes are attached after an enable. */
    default void afterEnable() throws BpfException {}

    /** Before its probes are detached by a disable. */
    default void beforeDisable() throws BpfException {}

    /** Before its probes attach while none is attached. */
    default void beforeFirstAttach() throws BpfException {}

    /** Once every probe of the layer is detached (its sites are found again at the next attach). */
    default void detached() {}

    /**
     * A layer that reads at this one's probes (its {@link ProbeLayer#needs}) is being switched on: probe what it
     * reads.
     */
    default void neededBy(ProbeLayer dependent) throws BpfException {}

    /** Whether to leave {@code sites} of {@code spec} in {@code library} unprobed (noted in {@link #notes}). */
    default boolean leaveUnprobed(ProbeSpec spec, Path library, List<Site> sites) {
        return false;
    }

    /**
     * A call-site probe of the layer attached at {@code fileOffset} in {@code library}, the file {@code mappedAs}
     * shows mapped (null: not known).
     */
    default void attachedCallSite(String program, Path library, MemoryMapping mappedAs,
                                  long fileOffset, ProbeLink link) {}

    /** Lines the layer's status adds to its placements while attached (sites left unprobed, and why). */
    default List<String> notes() {
        return List.of();
    }
}
