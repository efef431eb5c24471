package dev.infertop.model;

import java.util.List;

/**
 * The counters layer over some span: the set read (events in map order, line size, which event plays which
 * role), per-op counts, all counts summed, counted, migrated and switched-out groups, failed reads, and the refill bandwidth
 * of the last intervals (bytes/s, oldest first) for the panel's plot.
 */
public record CounterTotals(String setName, List<String> events, int lineBytes, int refillsIndex,
                            int instructionsIndex, int cyclesIndex, List<OpCounters> ops, List<Long> values,
                            long countedGroups, long migratedGroups, long switchedGroups, long failedReads,
                            long countedNs,
                            List<Double> bandwidthHistory) {
    public static final CounterTotals EMPTY = new CounterTotals("", List.of(), 0, -1, -1, -1, List.of(), List.of(),
            0, 0, 0, 0, 0, List.of());

    public CounterTotals {
        events = List.copyOf(events);
        ops = List.copyOf(ops);
        values = List.copyOf(values);
        bandwidthHistory = List.copyOf(bandwidthHistory);
    }

    public boolean isEmpty() {
        return events.isEmpty();
    }

    /** Node groups counted before an event that stays at 0 is called silent: far more than a real one needs. */
    public static final long SILENT_AFTER_GROUPS = 10;
    /** Kernel software events, which may rightly stay at 0 (no page fault, no migration). */
    private static final java.util.Set<String> SOFTWARE_EVENTS = java.util.Set.of("task-clock", "cpu-clock",
            "page-faults", "minor-faults", "major-faults", "context-switches", "cpu-migrations", "alignment-faults",
            "emulation-faults");

    /**
     * Hardware events that counted nothing over at least {@link #SILENT_AFTER_GROUPS} node groups while another
     * event counted: the PMU accepted them but does not implement them (QEMU's emulated PMU counts cycles and
     * leaves cache refills at 0). Their figures (refill bandwidth, verdicts) would read as "no traffic".
     */
    public List<String> silentEvents() {
        if (countedGroups < SILENT_AFTER_GROUPS || values.stream().allMatch(v -> v == 0)) {
            return List.of();
        }
        List<String> silent = new java.util.ArrayList<>();
        for (int i = 0; i < events.size() && i < values.size(); i++) {
            if (values.get(i) == 0 && !SOFTWARE_EVENTS.contains(events.get(i))) {
                silent.add(events.get(i));
            }
        }
        return silent;
    }

    /** One line on the silent events, or "" when there are none. */
    public String silentNotice() {
        List<String> silent = silentEvents();
        if (silent.isEmpty()) {
            return "";
        }
        boolean refills = refillsIndex >= 0 && silent.contains(events.get(refillsIndex));
        return String.join(", ", silent) + " counted nothing over " + countedGroups + " node groups while the other"
                + " events counted: this PMU does not implement " + (silent.size() == 1 ? "it" : "them")
                + " (an emulated one?)" + (refills ? "; refill bandwidth and the verdicts are unknown here" : "");
    }

    public long value(int index) {
        return index < 0 || index >= values.size() ? 0 : values.get(index);
    }

    /** Refill bandwidth over {@code spanNs} (all ops), bytes/s; 0 without a refills event. */
    public double refillBytesPerSecond(long spanNs) {
        return refillsIndex < 0 ? 0.0 : CounterFigures.refillBytesPerSecond(value(refillsIndex), lineBytes, spanNs);
    }

    /** An op's refill bandwidth while it ran: its refills x line size over its wall time. */
    public double refillBytesPerSecond(OpCounters op) {
        return refillsIndex < 0 ? 0.0 : CounterFigures.refillBytesPerSecond(op.value(refillsIndex), lineBytes, op.wallNs());
    }

    public double ipc(OpCounters op) {
        return instructionsIndex < 0 || cyclesIndex < 0 ? Double.NaN
                : CounterFigures.ipc(op.value(instructionsIndex), op.value(cyclesIndex));
    }

    public double refillsPerKiloInstruction(OpCounters op) {
        return refillsIndex < 0 || instructionsIndex < 0 ? Double.NaN
                : CounterFigures.refillsPerKiloInstruction(op.value(refillsIndex), op.value(instructionsIndex));
    }

    public CounterFigures.Verdict verdict(OpCounters op) {
        return CounterFigures.verdict(ipc(op), refillsPerKiloInstruction(op));
    }
}
