package dev.infertop.event;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static dev.infertop.event.EventLayout.COUNTERS_COUNT;
import static dev.infertop.event.EventLayout.COUNTERS_DELTA;
import static dev.infertop.event.EventLayout.COUNTERS_ENABLED;
import static dev.infertop.event.EventLayout.COUNTERS_FAILED;
import static dev.infertop.event.EventLayout.COUNTERS_MIGRATED_BITS;
import static dev.infertop.event.EventLayout.COUNTERS_RUNNING;
import static dev.infertop.event.EventLayout.COUNTERS_SWITCHED_BITS;
import static dev.infertop.event.EventLayout.MAX_COUNTER_EVENTS;
import static dev.infertop.event.EventLayout.MAX_COUNTER_GROUPS;

/**
 * One worker thread's counter readings over one graph (struct counters_event), decoded: per node group the raw
 * delta of each event, which groups migrated or were switched out between their two readings, and each event's
 * enabled and running time. One instance per decoder, refilled for each record, read during the call only
 * (copy what is kept).
 */
public final class CounterDeltas {
    /** Events a record holds per group: the counters layer opens at most this many. */
    public static final int EVENTS = MAX_COUNTER_EVENTS;
    /** Ints of a group bit set (migrated, switched): one bit per node group a record can hold. */
    public static final int GROUP_BIT_INTS = (MAX_COUNTER_GROUPS + 31) / 32;

    private MemorySegment data = MemorySegment.NULL;
    private long offset;
    private int groups;

    /** Views the record at {@code offset} of {@code data} with {@code groups} groups (the decoder checked its size). */
    CounterDeltas wrap(MemorySegment data, long offset, int groups) {
        this.data = data;
        this.offset = offset;
        this.groups = groups;
        return this;
    }

    /** A view of a whole counters_event record written in {@code record} (tests, replays). */
    public static CounterDeltas ofRecord(MemorySegment record) {
        return new CounterDeltas().wrap(record, 0, record.get(ValueLayout.JAVA_INT, COUNTERS_COUNT));
    }

    /** How many node groups the record holds. */
    public int groups() {
        return groups;
    }

    /** Copies the {@code groups() * EVENTS} raw deltas, group by group, into {@code to}. */
    public void copyDeltasTo(long[] to) {
        MemorySegment.copy(data, ValueLayout.JAVA_LONG_UNALIGNED, offset + COUNTERS_DELTA, to, 0, groups * EVENTS);
    }

    /** Copies the migrated groups' bits (bit k of int k/32: group k changed CPU) into {@code to}. */
    public void copyMigratedBitsTo(int[] to) {
        MemorySegment.copy(data, ValueLayout.JAVA_INT_UNALIGNED, offset + COUNTERS_MIGRATED_BITS, to, 0,
                Math.min(to.length, GROUP_BIT_INTS));
    }

    /** Copies the switched-out groups' bits (the thread left its CPU within group k) into {@code to}. */
    public void copySwitchedBitsTo(int[] to) {
        MemorySegment.copy(data, ValueLayout.JAVA_INT_UNALIGNED, offset + COUNTERS_SWITCHED_BITS, to, 0,
                Math.min(to.length, GROUP_BIT_INTS));
    }

    /** Event {@code e}'s time enabled over the graph (ns). */
    public long enabledNs(int e) {
        return data.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + COUNTERS_ENABLED + 8L * e);
    }

    /** Event {@code e}'s time on the PMU over the graph (ns): below {@link #enabledNs} when it was multiplexed. */
    public long runningNs(int e) {
        return data.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + COUNTERS_RUNNING + 8L * e);
    }

    /** Readings the probe could not take over the graph. */
    public long failedReads() {
        return data.get(ValueLayout.JAVA_INT_UNALIGNED, offset + COUNTERS_FAILED) & 0xffffffffL;
    }
}
