package dev.infertop.session;

import dev.infertop.ffi.LibC;

/**
 * Hands the native memory freed since start back to the system on a schedule: after libbpf's load (done by
 * {@link ProbeLoader}), the JIT compiles the collector's code in the first seconds and glibc keeps the freed
 * compiler arenas resident; later, what a snapshot or a layer switch freed. Trims at 2, 5, 15 and 60 s
 * after start, then every 5 minutes: malloc_trim walks the arenas, so it stays off the per-event path and out
 * of every tick.
 */
final class NativeHeapTrim {
    private static final long[] FIRST_TRIMS_NS = {2_000_000_000L, 5_000_000_000L, 15_000_000_000L, 60_000_000_000L};
    private static final long LATER_EVERY_NS = 300_000_000_000L;

    private final long startNs;
    private int trims;
    private long nextNs;

    NativeHeapTrim(long startNs) {
        this.startNs = startNs;
        this.nextNs = startNs + FIRST_TRIMS_NS[0];
    }

    /** Trims when the schedule says so; true when it did. */
    boolean onTick(long nowNs) {
        if (nowNs < nextNs) {
            return false;
        }
        LibC.trimNativeHeap();
        trims++;
        nextNs = trims < FIRST_TRIMS_NS.length ? startNs + FIRST_TRIMS_NS[trims] : nowNs + LATER_EVERY_NS;
        return true;
    }
}
