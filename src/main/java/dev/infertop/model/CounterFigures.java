package dev.infertop.model;

/**
 * The maths of the counters layer, with units in the names: scaling a multiplexed count, refill bandwidth,
 * IPC, refills per 1000 instructions, and the memory-/compute-bound verdict with its thresholds (shown in the
 * panel and documented in infertop(1)).
 */
public final class CounterFigures {
    private CounterFigures() {}

    /** At or above this many L3/LLC refills per 1000 instructions an op is memory-bound. */
    public static final double MEMORY_BOUND_REFILLS_PER_KILO_INSTRUCTION = 5.0;
    /** Below the refill threshold, at or above this IPC an op is compute-bound. */
    public static final double COMPUTE_BOUND_IPC = 1.0;

    public enum Verdict {
        MEMORY("memory-bound"), COMPUTE("compute-bound"), MIXED("mixed"), UNKNOWN("n/a");

        private final String label;

        Verdict(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** The thresholds in words, as the panel and the man page show them. */
    public static String thresholds() {
        return String.format(java.util.Locale.ROOT, "memory-bound: >= %.1f refills/1k instr; compute-bound: IPC >= %.2f",
                MEMORY_BOUND_REFILLS_PER_KILO_INSTRUCTION, COMPUTE_BOUND_IPC);
    }

    /**
     * A count taken while the event was on the PMU only {@code runningNs} of {@code enabledNs} (multiplexing),
     * extrapolated to the whole time, as perf(1) does: raw x enabled / running. 0 when it never ran.
     */
    public static long scaled(long raw, long enabledNs, long runningNs) {
        if (runningNs <= 0) {
            return 0;
        }
        if (runningNs >= enabledNs) {
            return raw;
        }
        return Math.round(raw * ((double) enabledNs / runningNs));
    }

    /** Refill bandwidth: refills x line size over {@code spanNs}, in bytes per second. */
    public static double refillBytesPerSecond(long refills, int lineBytes, long spanNs) {
        return spanNs <= 0 ? 0.0 : refills * (double) lineBytes * 1e9 / spanNs;
    }

    /** Instructions per cycle; NaN without cycles. */
    public static double ipc(long instructions, long cycles) {
        return cycles <= 0 ? Double.NaN : (double) instructions / cycles;
    }

    /** Refills per 1000 instructions; NaN without instructions. */
    public static double refillsPerKiloInstruction(long refills, long instructions) {
        return instructions <= 0 ? Double.NaN : refills * 1000.0 / instructions;
    }

    /** NaN (an event missing from the set) gives UNKNOWN. */
    public static Verdict verdict(double ipc, double refillsPerKiloInstruction) {
        if (Double.isNaN(ipc) || Double.isNaN(refillsPerKiloInstruction)) {
            return Verdict.UNKNOWN;
        }
        if (refillsPerKiloInstruction >= MEMORY_BOUND_REFILLS_PER_KILO_INSTRUCTION) {
            return Verdict.MEMORY;
        }
        return ipc >= COMPUTE_BOUND_IPC ? Verdict.COMPUTE : Verdict.MIXED;
    }
}
