package dev.infertop.process.layout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds where known values land in snapshots of one struct type: an offset is a candidate when, in EVERY
 * sample, the bytes there equal that sample's expected value. Several samples with different values make the
 * match unique; {@link #unique} fails loudly when it is not.
 */
final class StructScan {
    private final Path library;
    private final String structName;
    private final long windowBytes;

    StructScan(Path library, String structName, long windowBytes) {
        this.library = library;
        this.structName = structName;
        this.windowBytes = windowBytes;
    }

    /** One struct instance and the value expected at the unknown offset. */
    record Sample(MemorySegment struct, long[] values, int valueBytes) {
        static Sample int32(MemorySegment struct, long... values) {
            return new Sample(struct, values, 4);
        }

        static Sample int64(MemorySegment struct, long... values) {
            return new Sample(struct, values, 8);
        }

        static Sample pointer(MemorySegment struct, MemorySegment... pointers) {
            long[] values = new long[pointers.length];
            for (int i = 0; i < pointers.length; i++) {
                values[i] = pointers[i].address();
            }
            return new Sample(struct, values, 8);
        }

        boolean matchesAt(long offset) {
            long end = offset + (long) values.length * valueBytes;
            if (end > struct.byteSize()) {
                return false;
            }
            for (int i = 0; i < values.length; i++) {
                long at = offset + (long) i * valueBytes;
                long actual = valueBytes == 4 ? struct.get(ValueLayout.JAVA_INT_UNALIGNED, at)
                        : struct.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
                long expected = valueBytes == 4 ? (int) values[i] : values[i];
                if (actual != expected) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Offsets, aligned to the value size, where every sample matches. */
    List<Integer> candidates(List<Sample> samples) {
        int step = samples.getFirst().valueBytes();
        List<Integer> offsets = new ArrayList<>();
        for (int offset = 0; offset < windowBytes; offset += step) {
            final int at = offset;
            if (samples.stream().allMatch(s -> s.matchesAt(at))) {
                offsets.add(offset);
            }
        }
        return offsets;
    }

    int unique(String field, List<Sample> samples) throws CalibrationException {
        return uniqueOf(field, candidates(samples));
    }

    int uniqueOf(String field, List<Integer> candidates) throws CalibrationException {
        if (candidates.size() != 1) {
            throw CalibrationException.of(library, structName + "." + field + " is "
                    + (candidates.isEmpty() ? "at no offset" : "ambiguous (offsets " + candidates + ")")
                    + " within its first " + windowBytes + " bytes");
        }
        return candidates.getFirst();
    }

    static long int64At(MemorySegment struct, long offset) {
        return struct.get(ValueLayout.JAVA_LONG_UNALIGNED, offset);
    }

    static int int32At(MemorySegment struct, long offset) {
        return struct.get(ValueLayout.JAVA_INT_UNALIGNED, offset);
    }
}
