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
