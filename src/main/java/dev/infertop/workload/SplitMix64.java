package dev.infertop.workload;

/**
 * SplitMix64 (Steele, Lea, Flood 2014). Written out rather than using {@link java.util.SplittableRandom}
 * because generated model files must stay byte-identical across JDK versions, and only our own code
 * guarantees the sequence.
 */
public final class SplitMix64 {

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;
    private static final float TWO_POW_MINUS_24 = 0x1.0p-24f;

    private long state;

    public SplitMix64(long seed) {
        this.state = seed;
    }

    /** A well-mixed seed for an independent stream identified by {@code streamId} under {@code seed}. */
    public static long streamSeed(long seed, long streamId) {
        return mix(seed + mix(streamId * GOLDEN_GAMMA + GOLDEN_GAMMA));
    }

    public long nextLong() {
        state += GOLDEN_GAMMA;
        return mix(state);
    }

    /** Uniform in [-1, 1) with 24 bits of resolution: enough for F16 weights, and exact in float. */
    public float nextSignedUnitFloat() {
        return (int) (nextLong() >>> 40) * TWO_POW_MINUS_24 * 2f - 1f;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
