package dev.infertop.machine;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;

/**
 * The measuring JVM's entry point ({@link CeilingMeasurement} starts it): a JVM of its own because infertop's
 * runs with the C1 compiler only (small and quick to start), and the probes need C2 to vectorise their loops
 * the way llama.cpp's kernels are vectorised. Prints one JSON object ({@link MachineCeilings}) on stdout.
 * Arguments: THREADS BUFFER_BYTES ROUNDS.
 */
public final class CeilingChild {
    private CeilingChild() {}

    static final int WARM_UP_ROUNDS = 3;

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long bufferBytes = Long.parseLong(args[1]);
        int rounds = Integer.parseInt(args[2]);
        double[] memory = measured(MemoryReadProbe.measure(bufferBytes, threads, rounds + WARM_UP_ROUNDS));
        double[] compute = measured(ComputeProbe.measure(threads, rounds + WARM_UP_ROUNDS, 200_000_000L));
        MachineCeilings ceilings = new MachineCeilings(MachineCeilings.FORMAT_VERSION,
                Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(), CpuInfo.model(), threads, bufferBytes,
                median(memory), memory[0], memory[memory.length - 1],
                "every cache line of a " + (bufferBytes >> 20) + " MiB buffer read by " + threads + " threads, median of " + rounds,
                median(compute), compute[0], compute[compute.length - 1],
                "f32 FMA loop in L1, JIT-vectorised, " + threads + " threads, median of " + rounds);
        System.out.println(new ObjectMapper().writeValueAsString(ceilings));
    }

    /** The rounds after warm-up, sorted. */
    private static double[] measured(double[] rounds) {
        double[] kept = Arrays.copyOfRange(rounds, WARM_UP_ROUNDS, rounds.length);
        Arrays.sort(kept);
        return kept;
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
