package dev.infertop.machine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Sustained memory read bandwidth, STREAM-like: {@code threads} threads each sum their share of one buffer far
 * larger than the last-level cache, round after round; bandwidth is the buffer's bytes over the round's wall
 * time. The buffer is filled with distinct values first (pages of one value could be merged by the host).
 * Decode is a read of every weight once per token, so a read-only sweep is the ceiling that applies.
 */
final class MemoryReadProbe {
    private MemoryReadProbe() {}

    static final double ROUND_SECONDS = 0.25;

    /** Bytes per second of each round, in order (the first rounds include the JIT's warm-up). */
    static double[] measure(long bufferBytes, int threads, int rounds) throws InterruptedException {
        long words = bufferBytes / Long.BYTES / threads * threads;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(words * Long.BYTES, 4096);
            for (long i = 0; i < words; i++) {
                buffer.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            double[] bytesPerSecond = new double[rounds];
            long[] sums = new long[threads];
            int sweeps = 1;
            for (int round = 0; round < rounds; round++) {
                Thread[] workers = new Thread[threads];
                long slice = words / threads;
                int roundSweeps = sweeps;
                long startNs = System.nanoTime();
                for (int t = 0; t < threads; t++) {
                    int index = t;
                    workers[t] = Thread.ofPlatform().start(() -> {
                        for (int sweep = 0; sweep < roundSweeps; sweep++) {
                            sums[index] += sum(buffer, index * slice, (index + 1) * slice);
                        }
                    });
                }
                for (Thread worker : workers) {
                    worker.join();
                }
                double seconds = (System.nanoTime() - startNs) / 1e9;
                bytesPerSecond[round] = roundSweeps * words * (double) Long.BYTES / seconds;
                // Rounds of about ROUND_SECONDS: a single sweep of a few hundred MiB takes milliseconds, which a
                // timer tick or the JIT finishing a compile would dominate.
                sweeps = (int) Math.max(1, Math.min(1000, Math.round(roundSweeps * ROUND_SECONDS / seconds)));
            }
            if (Arrays.stream(sums).sum() == 42) {
                System.err.print(""); // the sums are used: the reads cannot be optimised away
            }
            return bytesPerSecond;
        }
    }

    /**
     * One word of every 64-byte cache line, four lines at a time into independent sums: every line of the slice
     * still comes from memory (that is the traffic a weight sweep causes), but the loop issues an eighth of the
     * loads, so it waits on memory and not on the JIT's scalar load rate (which, reading every word, stayed
     * below what gcc's vectorised loop reached on a fast machine).
     */
    static long sum(MemorySegment buffer, long fromWord, long toWord) {
        long a = 0;
        long b = 0;
        long c = 0;
        long d = 0;
        long word = fromWord;
        for (; word + 31 < toWord; word += 32) {
            a += buffer.getAtIndex(ValueLayout.JAVA_LONG, word);
            b += buffer.getAtIndex(ValueLayout.JAVA_LONG, word + 8);
            c += buffer.getAtIndex(ValueLayout.JAVA_LONG, word + 16);
            d += buffer.getAtIndex(ValueLayout.JAVA_LONG, word + 24);
        }
        for (; word < toWord; word += 8) {
            a += buffer.getAtIndex(ValueLayout.JAVA_LONG, word);
        }
        return a + b + c + d;
    }
}
