package dev.infertop.agg;

import dev.infertop.model.BackendNames;
import dev.infertop.model.Limits;
import dev.infertop.model.Other;

/**
 * The backends graphs ran on, by GUID, as every layer that keeps figures per backend keys them (graph computes,
 * their op counts), so that they agree on which are kept. The target chooses the GUID (the 16 bytes its
 * backend struct points to), so at most {@link #MAX_BACKENDS} are kept; any other GUID is counted under
 * {@link #OTHER}, named {@link Other#NAME}. ggml has about a dozen backend kinds, one GUID each. Single
 * writer: the collector thread; a lookup is a scan of a few pairs of longs, with no allocation.
 */
public final class BackendKeys {
    public static final int MAX_BACKENDS = 16;
    /** The index of every backend past the cap. */
    public static final int OTHER = MAX_BACKENDS;

    private final BackendNames backendNames;
    private final long[] guidHigh = new long[MAX_BACKENDS];
    private final long[] guidLow = new long[MAX_BACKENDS];
    private final String[] names = new String[MAX_BACKENDS + 1];
    private int count;

    public BackendKeys(BackendNames backendNames) {
        this.backendNames = backendNames;
        names[OTHER] = Other.NAME;
    }

    /** The index of the backend with this GUID, taken now if it is new: below {@link #MAX_BACKENDS}, or OTHER. */
    public int indexOf(long high, long low) {
        for (int i = 0; i < count; i++) {
            if (guidHigh[i] == high && guidLow[i] == low) {
                return i;
            }
        }
        if (count == MAX_BACKENDS) {
            return OTHER;
        }
        guidHigh[count] = high;
        guidLow[count] = low;
        names[count] = backendNames.name(high, low);
        return count++;
    }

    /** The display name of {@code index}: configured, "guid:HEX", "unknown", or "other". */
    public String name(int index) {
        return names[index];
    }

    /** GUIDs kept. */
    public int count() {
        return count;
    }

    /**
     * This table in the snapshot's limits: {@code otherComputes}, the graph computes counted under "other",
     * is the other backend's own count (kept once, where it is counted).
     */
    public Limits.Bound bound(long otherComputes) {
        return Limits.Bound.of("backends", count, "backends_cap", MAX_BACKENDS,
                Limits.Past.capped("backend_computes_folded", otherComputes));
    }
}
