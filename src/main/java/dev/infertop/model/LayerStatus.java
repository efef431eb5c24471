package dev.infertop.model;

import java.util.List;

/** Whether a probe layer is attached, and if not, why; plus where each of its probes sits. */
public record LayerStatus(Layer layer, State state, String reason, List<String> probes) {
    public enum State {
        /** every probe of the layer attached */
        ON,
        /** some probes attached, others' symbols missing (reason says which) */
        PARTIAL,
        /** switched off by the user */
        OFF,
        /** no probe could be attached (reason says why) */
        UNAVAILABLE;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** A reason may quote a library path or a symbol of the target: made visible ({@link SafeText}). */
    public LayerStatus {
        reason = SafeText.of(reason);
        probes = probes.stream().map(SafeText::of).toList();
    }
}
