package dev.infertop.snapshot;

import dev.infertop.model.Other;
import java.util.OptionalInt;

/**
 * The keys of a snapshot's summary that name a number (a thread id, an expert). A snapshot directory is read
 * from disk, where anyone with access may have edited it: a key that is no such number skips its entry, as a
 * layer this build does not know does, rather than failing the report (a fuzzed summary with a thread named
 * "graph_computes" once ended the replay in a NumberFormatException).
 */
final class NumberKeys {
    private NumberKeys() {}

    /** A thread's key: its id, or {@link dev.infertop.model.Other#TID} for the "other" row; else empty. */
    static OptionalInt tid(String key) {
        return Other.NAME.equals(key) ? OptionalInt.of(Other.TID) : of(key);
    }

    /** {@code key} as a non-negative int, or empty. */
    static OptionalInt of(String key) {
        if (key.isEmpty() || key.length() > 10) {
            return OptionalInt.empty();
        }
        for (int i = 0; i < key.length(); i++) {
            if (key.charAt(i) < '0' || key.charAt(i) > '9') {
                return OptionalInt.empty();
            }
        }
        long value = Long.parseLong(key);
        return value <= Integer.MAX_VALUE ? OptionalInt.of((int) value) : OptionalInt.empty();
    }
}
