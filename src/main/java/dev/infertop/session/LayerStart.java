package dev.infertop.session;

import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.ProbeLayer;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The attach stage: the layers --layers asks for (and those they need) switched on, --op-when's operator layer
 * left off until its rule is evaluated, and the probes attached to the candidate files. No probe at all ends
 * the run with one line naming each layer's reason.
 */
final class LayerStart {
    private LayerStart() {}

    static void attach(RunControl control, ProbeSet probes, List<Path> candidates) throws BpfException {
        TraceOptions options = control.options;
        Set<Layer> wantedLayers = EnumSet.copyOf(options.layers());
        for (Layer layer : options.layers()) {
            Layer needed = ProbeLayer.of(layer).needs();
            if (needed != null && !wantedLayers.contains(needed)) {
                control.notice("infertop: the " + layer.id() + " layer " + ProbeLayer.of(layer).needsWhy()
                        + ": switching the " + needed.id() + " layer on too");
                wantedLayers.add(needed);
            }
        }
        for (Layer layer : wantedLayers) {
            if (layer == Layer.OPERATOR && options.operatorRule() != null) {
                probes.disable(layer, "--op-when '" + options.operatorRule().text() + "' not evaluated yet");
            } else {
                probes.enable(layer);
            }
        }
        probes.addLibraries(candidates).forEach(control::notice);
        if (probes.attachedProbeCount() == 0) {
            throw new UserError("no probe could be attached: " + reasons(probes.statuses()));
        }
    }

    private static String reasons(List<LayerStatus> statuses) {
        return String.join("; ", statuses.stream().filter(s -> !s.reason().isEmpty())
                .map(s -> s.layer().id() + ": " + s.reason()).toList());
    }
}
