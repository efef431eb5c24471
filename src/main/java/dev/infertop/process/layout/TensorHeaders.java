package dev.infertop.process.layout;

import dev.infertop.process.TargetMemory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A tensor's type and shape read from the traced process's memory at the calibrated offsets, off the hot path:
 * the probes send each node's own shape, and a node's weight (MUL_MAT's src0) is read here once per address,
 * to size what the node streams. Whatever comes back is the target's and is checked: a type the target's table
 * does not know, or a dimension outside 1..2^40, is no answer.
 */
public final class TensorHeaders {
    private TensorHeaders() {}

    /** A tensor's {@code enum ggml_type} and {@code ne[4]}. */
    public record Header(int type, long ne0, long ne1, long ne2, long ne3) {
        public long elements() {
            return ne0 * ne1 * ne2 * ne3;
        }
    }

    static final long MAX_DIMENSION = 1L << 40;

    /** The header of the tensor at {@code address} in {@code pid}, or null when unreadable or implausible. */
    public static Header read(int pid, long address, TensorLayout layout, TypeTable types) {
        int from = Math.min(layout.typeOffset(), layout.neOffset());
        int to = Math.max(layout.typeOffset() + Integer.BYTES, layout.neOffset() + 4 * Long.BYTES);
        byte[] bytes = TargetMemory.bytes(pid, address + from, to - from);
        return bytes == null ? null : parse(bytes, layout.typeOffset() - from, layout.neOffset() - from, types);
    }

    /**
     * Bytes from the start of a tensor's struct through its type, shape and name: one read of them gives all
     * three ({@link #parseStruct}, {@link #nameEndsWith}).
     */
    public static int structSpanBytes(TensorLayout layout) {
        return Math.max(Math.max(layout.typeOffset() + Integer.BYTES, layout.neOffset() + 4 * Long.BYTES),
                layout.nameOffset() + layout.maxNameBytes());
    }

    /** The header of the tensor whose struct starts at {@code at} in {@code bytes}; null when implausible. */
    public static Header parseStruct(byte[] bytes, int at, TensorLayout layout, TypeTable types) {
        return parse(bytes, at + layout.typeOffset(), at + layout.neOffset(), types);
    }

    /**
     * Whether the name of the tensor whose struct starts at {@code at} (NUL-terminated, or cut at its
     * {@code maxNameBytes}) ends in the ASCII {@code suffix}: compared as bytes, no string made of the target's.
     */
    public static boolean nameEndsWith(byte[] bytes, int at, TensorLayout layout, String suffix) {
        int from = at + layout.nameOffset();
        int end = from;
        while (end < from + layout.maxNameBytes() && bytes[end] != 0) {
            end++;
        }
        int start = end - suffix.length();
        if (start < from) {
            return false;
        }
        for (int i = 0; i < suffix.length(); i++) {
            if (bytes[start + i] != (byte) suffix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    static Header parse(byte[] bytes, int typeAt, int neAt, TypeTable types) {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
        int type = in.getInt(typeAt);
        long[] ne = new long[4];
        for (int i = 0; i < 4; i++) {
            ne[i] = in.getLong(neAt + i * Long.BYTES);
            if (ne[i] < 1 || ne[i] > MAX_DIMENSION) {
                return null;
            }
        }
        if (type < 0 || type >= types.count() || types.names().get(type) == null) {
            return null;
        }
        return new Header(type, ne[0], ne[1], ne[2], ne[3]);
    }
}
