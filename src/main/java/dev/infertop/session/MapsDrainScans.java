package dev.infertop.session;

/**
 * When a drain of the ring buffer should look at /proc/PID/maps for the model file, while it is not known yet.
 *
 * <p>The first records mean the model is loaded (it is, before the first llama_decode): look at once. Otherwise
 * look at most every {@link #MIN_GAP_NS}, and only while records flow or during the first
 * {@link #EARLY_NS} of the session (a short run may end before the first interval). After that the tick
 * looks, once per interval: a target that never maps a model (idle, or loaded with --no-mmap) must not cost a
 * read of its whole maps 20 times a second for as long as it runs.
 */
final class MapsDrainScans {
    static final long MIN_GAP_NS = 50_000_000L;
    static final long EARLY_NS = 2_000_000_000L;

    private long startNs = Long.MIN_VALUE;
    private long lastScanNs = Long.MIN_VALUE;
    private boolean sawRecords;

    /** Whether the drain at {@code nowNs}, which read {@code records}, should scan the maps now. */
    boolean due(long nowNs, int records) {
        if (startNs == Long.MIN_VALUE) {
            startNs = nowNs;
        }
        boolean firstRecords = records > 0 && !sawRecords;
        sawRecords |= records > 0;
        boolean early = nowNs - startNs < EARLY_NS;
        boolean gapOver = lastScanNs == Long.MIN_VALUE || nowNs - lastScanNs > MIN_GAP_NS;
        return firstRecords || ((early || records > 0) && gapOver);
    }

    /** A scan happened at {@code nowNs} (from a drain or a tick). */
    void scanned(long nowNs) {
        lastScanNs = nowNs;
    }
}
