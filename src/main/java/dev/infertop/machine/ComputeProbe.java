package dev.infertop.machine;

/**
 * A compute ceiling: single-precision fused multiply-adds on a buffer that stays in the L1 cache, sixteen
 * dependent FMAs per element between one load and one store, so the loop is bound by the FMA units, not by
 * memory; the JIT (C2) vectorises it across elements to the widest SIMD the CPU has (AVX-512, AVX2, NEON).
 * It is what a well-vectorised kernel on this CPU can reach, the roof a matmul's FLOPs are held against.
 */
final class ComputeProbe {
    private ComputeProbe() {}

    static final int ELEMENTS = 2048; // 8 KiB of floats: in L1 on every CPU infertop runs on
    static final int FMAS_PER_ELEMENT = 16;
    private static final float SCALE = 0.999f;
    private static final float ADD = 0.001f;

    /** FLOP/s of each round of {@code roundNs} on {@code threads} threads. */
    static double[] measure(int threads, int rounds, long roundNs) throws InterruptedException {
        double[] flopsPerSecond = new double[rounds];
        for (int round = 0; round < rounds; round++) {
            long[] passes = new long[threads];
            float[] results = new float[threads];
            Thread[] workers = new Thread[threads];
            long startNs = System.nanoTime();
            long endNs = startNs + roundNs;
            for (int t = 0; t < threads; t++) {
                int index = t;
                workers[t] = Thread.ofPlatform().start(() -> {
                    float[] values = new float[ELEMENTS];
                    java.util.Arrays.fill(values, 1f);
                    long done = 0;
                    while (System.nanoTime() < endNs) {
                        for (int i = 0; i < 64; i++) {
                            kernel(values);
                        }
                        done += 64;
                    }
                    passes[index] = done;
                    results[index] = values[index % ELEMENTS];
                });
            }
            for (Thread worker : workers) {
                worker.join();
            }
            double seconds = (System.nanoTime() - startNs) / 1e9;
            long total = java.util.Arrays.stream(passes).sum();
            flopsPerSecond[round] = total * (double) ELEMENTS * FMAS_PER_ELEMENT * 2 / seconds;
            if (results[0] == 42f) {
                System.err.print(""); // the values are used
            }
        }
        return flopsPerSecond;
    }

    static void kernel(float[] values) {
        for (int i = 0; i < values.length; i++) {
            float x = values[i];
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            x = Math.fma(x, SCALE, ADD);
            values[i] = x;
        }
    }
}
