package dev.infertop.machine;

import dev.infertop.model.Roofline;
import java.util.Locale;

/**
 * This machine's two roofline ceilings, as measured once and cached ({@link CeilingCache}): sustained memory
 * read bandwidth and single-precision FMA throughput, on {@code threads} threads, each the median of the rounds
 * after warm-up with their range, and how and when they were measured.
 *
 * @param memoryReadBytesPerSecond median of the read rounds ({@link MemoryReadProbe})
 * @param computeFlopsPerSecond    median of the FMA rounds ({@link ComputeProbe})
 */
public record MachineCeilings(int formatVersion, String measuredAt, String cpu, int threads, long bufferBytes,
                              double memoryReadBytesPerSecond, double memoryReadMinBytesPerSecond,
                              double memoryReadMaxBytesPerSecond, String memoryMethod,
                              double computeFlopsPerSecond, double computeMinFlopsPerSecond,
                              double computeMaxFlopsPerSecond, String computeMethod) {
    static final int FORMAT_VERSION = 1;

    /** FLOPs per byte where the two roofs meet: below it an op at full speed is memory-bound. */
    public double ridgeFlopsPerByte() {
        return computeFlopsPerSecond / memoryReadBytesPerSecond;
    }

    /** The two roofs as the roofline verdict takes them. */
    public Roofline.Ceilings roofs() {
        return new Roofline.Ceilings(memoryReadBytesPerSecond, computeFlopsPerSecond);
    }

    /** The lines {@code infertop machine} prints. */
    public String describe() {
        return String.format(Locale.ROOT, """
                memory read   %7.1f GB/s     (range %.1f-%.1f; %s)
                compute       %7.1f GFLOP/s  (range %.1f-%.1f; %s)
                ridge point   %7.1f FLOP/byte (below it, an op at full speed is memory-bound)
                measured %s on %s, %d threads, %d MiB buffer""",
                memoryReadBytesPerSecond / 1e9, memoryReadMinBytesPerSecond / 1e9, memoryReadMaxBytesPerSecond / 1e9,
                memoryMethod, computeFlopsPerSecond / 1e9, computeMinFlopsPerSecond / 1e9,
                computeMaxFlopsPerSecond / 1e9, computeMethod, ridgeFlopsPerByte(), measuredAt, cpu, threads,
                bufferBytes >> 20);
    }
}
