package dev.infertop.bpf;

import dev.infertop.model.Layer;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Each probe layer described once, as data (htop's ProcessFieldData idea): its probes, whether it is
 * all-or-nothing, the layer it needs, and what it switches in the kernel besides its probes (control maps, plans:
 * its {@link KernelSide}). {@link ProbeSet} and the session iterate over these descriptions instead of branching
 * on layers.
 *
 * @param probes       the layer's own probes (none for a layer that reads at another's, or perf events)
 * @param allOrNothing attach nothing while a required probe is missing: the operator layer reads graphs only
 *                     for the worker threads to report against; without the thread probes it would cost and
 *                     show nothing
 * @param needs        the layer this one reads from, switched on with it; null when none
 * @param needsWhy     what this layer takes from {@code needs}, as said when switching that one on
 * @param borrowedNote for a layer that reads at {@code needs}' probes, with none of its own or optional ones only:
 *                     its status line
 * @param kernelSide   makes, per probe set, what the layer does in the kernel besides attaching its probes
 */
public record ProbeLayer(Layer layer, List<ProbeSpec> probes, boolean allOrNothing, Layer needs, String needsWhy,
                         String borrowedNote, KernelSide.Factory kernelSide) {
    private static final Map<Layer, ProbeLayer> LAYERS = new EnumMap<>(Layer.class);

    static {
        for (Layer layer : Layer.values()) {
            LAYERS.put(layer, switch (layer) {
                case TOKEN, GRAPH, COUNTERS -> new ProbeLayer(layer, ProbeSpec.of(layer), false, null, "", "",
                        KernelSide.Factory.NONE);
                case SCHED -> new ProbeLayer(layer, ProbeSpec.of(layer), false, null, "", "", SchedKernelSide::new);
                case OPERATOR -> new ProbeLayer(layer, ProbeSpec.of(layer), true, null, "", "",
                        OperatorKernelSide::new);
                // The MoE layer's BPF side copies expert ids at the operator layer's barrier probes and numbers a
                // thread's groups by the operator layer's graph walk: "MoE needs the operator layer" is here only.
                case MOE -> new ProbeLayer(layer, ProbeSpec.of(layer), false, Layer.OPERATOR,
                        "reads the operator layer's graphs and barrier arrivals",
                        "expert ids copied at the operator layer's barrier probes (and, where the scheduler copies them"
                                + " back from a device, from that copy)",
                        MoeKernelSide::new);
            });
        }
    }

    public static ProbeLayer of(Layer layer) {
        return LAYERS.get(layer);
    }

    /**
     * Whether this layer runs when and as the layer it needs does: it reads at that layer's probes, and its own,
     * if any, are all optional (they add to what it reads; without them it still reads).
     */
    boolean borrowsProbes() {
        return needs != null && probes.stream().allMatch(ProbeSpec::optional);
    }
}
