package dev.infertop.event;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Per op id, a count a backend record carries ({@link EventLayout#BACKEND_OP_SLOTS} unsigned shorts: the nodes of
 * a graph on another backend than the CPU, or the nodes its host dispatch called for or fused), decoded: views
 * reused for each record, read during the call only.
 */
public final class OpCounts {
    private MemorySegment data = MemorySegment.NULL;
    private long offset;

    /** Views the slots at {@code offset} of {@code data} (the decoder checked the record holds them all). */
    OpCounts wrap(MemorySegment data, long offset) {
        this.data = data;
        this.offset = offset;
        return this;
    }

    /** A view of {@code counts}, op id by op id, the slots past them 0 (tests, replays). */
    public static OpCounts of(int... counts) {
        short[] slots = new short[EventLayout.BACKEND_OP_SLOTS];
        for (int op = 0; op < Math.min(counts.length, slots.length); op++) {
            slots[op] = (short) counts[op];
        }
        return new OpCounts().wrap(MemorySegment.ofArray(slots), 0);
    }

    /** The slots: op ids 0 .. size()-1 (the last one holds every op id past it). */
    public int size() {
        return EventLayout.BACKEND_OP_SLOTS;
    }

    /** The count of op id {@code op}, 0 <= op < size(). */
    public int at(int op) {
        return Short.toUnsignedInt(data.get(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 2L * op));
    }
}
