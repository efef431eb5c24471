package dev.infertop.model;

import java.util.List;

/**
 * One op's counters over some span, summed over threads: scaled counts per event (in the set's order), the
 * groups counted, the groups left out because their thread changed CPU between the two readings, the counted
 * groups during which the thread was switched out (other tasks' counts may be in them), the time
 * the counted stretches cover (each from the thread's previous reading to its arrival at the barrier after
 * the group, so it includes its barrier wait after the previous group), and the op's wall time.
 */
public record OpCounters(String op, long groups, long migratedGroups, long switchedGroups, List<Long> values,
                         long countedNs, long wallNs) {
    public OpCounters {
        values = List.copyOf(values);
    }

    /** The scaled count of event {@code index}, or 0 when the set has no such event. */
    public long value(int index) {
        return index < 0 || index >= values.size() ? 0 : values.get(index);
    }
}
