package dev.infertop.agg;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How long the collector sleeps between drains, from how fast the ring filled since the last one. */
class CollectorDrainPeriodTest {
    private static final long RING = 4L << 20; // the default --ring-kib 4096
    private static final long MS = 1_000_000L;

    @Test
    void aQuietRingIsDrainedTwiceASecond() {
        assertEquals(500, Collector.drainPeriodMs(0, 100 * MS, RING), "nothing came");
        // token + graph layers: ~6 records of ~100 bytes per token at ~70 tokens/s
        assertEquals(500, Collector.drainPeriodMs(4_200, 100 * MS, RING));
        // operator layer on the bench model: ~300 KB/s; an eighth of the ring takes ~1.7 s to fill
        assertEquals(500, Collector.drainPeriodMs(150_000, 500 * MS, RING));
    }

    @Test
    void aFastFillingRingIsDrainedBeforeItIsAnEighthFull() {
        // 10 MB/s (a tiny model at thousands of tokens/s): an eighth (512 KiB) fills in ~52 ms
        assertEquals(52, Collector.drainPeriodMs(5_000_000, 500 * MS, RING));
        // faster than an eighth per 10 ms: the busy period, never less
        assertEquals(10, Collector.drainPeriodMs(2_000_000, 10 * MS, RING));
    }
}
