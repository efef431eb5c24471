package dev.infertop.event;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The bytes of a MoE layer's expert-ids tensor as the probe copied them (struct moe_event's ids): int32 ids, row
 * by row at the tensor's own row stride. One instance per decoder, refilled for each record, read during the call
 * only (copy what is kept).
 */
public final class ExpertIds {
    /** No ids: a record that copies none (a graph's start, a failed read). */
    public static final ExpertIds NONE = new ExpertIds();

    private MemorySegment data = MemorySegment.NULL;
    private long offset;
    private int bytes;

    /** Views {@code bytes} bytes at {@code offset} of {@code data} (the decoder checked they are in it). */
    ExpertIds wrap(MemorySegment data, long offset, int bytes) {
        this.data = data;
        this.offset = offset;
        this.bytes = bytes;
        return this;
    }

    /** A view of the first {@code bytes} bytes of {@code data} (tests, replays). */
    public static ExpertIds of(MemorySegment data, int bytes) {
        if (bytes < 0 || bytes > data.byteSize()) {
            throw new IllegalArgumentException("ids of " + bytes + " bytes in a segment of " + data.byteSize());
        }
        return new ExpertIds().wrap(data, 0, bytes);
    }

    /** How many bytes were copied: the rows that fit whole are those the caller may read. */
    public int bytes() {
        return bytes;
    }

    /** The id in slot {@code slot} of row {@code row}, rows {@code rowBytes} apart (the tensor's nb1). */
    public int id(long row, long rowBytes, int slot) {
        return data.get(ValueLayout.JAVA_INT_UNALIGNED, offset + row * rowBytes + 4L * slot);
    }

    /** Byte {@code b}, 0 <= b < bytes(). */
    public byte byteAt(int b) {
        return data.get(ValueLayout.JAVA_BYTE, offset + b);
    }
}
