package dev.infertop.event;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A worker thread's barrier arrival times over one graph (struct arrivals_event's timestamps), decoded: one
 * instance per decoder, refilled for each record, read during the call only (copy what is kept).
 */
public final class ArrivalTimes {
    private MemorySegment data = MemorySegment.NULL;
    private long offset;
    private int count;

    /** Views {@code count} timestamps at {@code offset} of {@code data} (the decoder checked they are in it). */
    ArrivalTimes wrap(MemorySegment data, long offset, int count) {
        this.data = data;
        this.offset = offset;
        this.count = count;
        return this;
    }

    /** A view of {@code times} (tests, replays). */
    public static ArrivalTimes of(long... times) {
        return new ArrivalTimes().wrap(MemorySegment.ofArray(times.clone()), 0, times.length);
    }

    /** How many node groups' arrivals the record holds. */
    public int count() {
        return count;
    }

    /** The arrival (ns) after node group {@code k}, 0 <= k < count(). */
    public long at(int k) {
        return data.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 8L * k);
    }

    /** Copies the first {@link #count} arrival times (ns) into {@code to}, which holds at least that many. */
    public void copyTo(long[] to) {
        MemorySegment.copy(data, ValueLayout.JAVA_LONG_UNALIGNED, offset, to, 0, count);
    }
}
