package dev.infertop.model;

import java.util.List;

/**
 * The operator layer's clock samples over some span: where the target's threads were when a CPU's timer
 * interrupted them (user code only), each sample named by what the exact sample windows taught about its code
 * line: an op, barrier wait, outside any graph, or unknown (code not seen in a window yet). Figures are sample
 * counts, fractional where a code line was seen running more than one op (split by what the windows saw).
 *
 * @param periodNs       the sampler's period per CPU; 0 when no sampler ran (then every figure is 0 and says so)
 * @param samples        samples of the target's threads in the span
 * @param unknown        of them, in code no window has seen yet: named nothing, never guessed
 * @param barrierWait    of them, in code the windows saw only waiting at a node group's barrier
 * @param outsideGraphs  of them, in code the windows saw run outside any graph compute (sampling, HTTP, ...)
 * @param ops            per op (the op table's names), most samples first; shares over the op samples
 * @param threads        per thread: its samples and the op most of them named
 * @param learnedSamples samples of the run that fell in an exact window and taught a code line its op
 * @param learnedLines   code lines (of {@link #LINE_BYTES}) learned so far
 * @param between        the run's samples outside the exact windows, named the same way: what the windows did
 *                       not trace (empty in an interval's figures)
 */
public record OpSampleTotals(long periodNs, long samples, double unknown, double barrierWait, double outsideGraphs,
                             List<Op> ops, List<Thread> threads, long learnedSamples, int learnedLines,
                             Between between) {
    /** The code granularity a sample is named at. */
    public static final int LINE_BYTES = 64;

    public static final OpSampleTotals EMPTY = new OpSampleTotals(0, 0, 0, 0, 0, List.of(), List.of(), 0, 0,
            Between.EMPTY);

    public OpSampleTotals {
        ops = List.copyOf(ops);
        threads = List.copyOf(threads);
        between = between == null ? Between.EMPTY : between;
    }

    /** An op's samples and its share of the samples that named an op. */
    public record Op(String op, double samples, double share) {}

    /** A thread's samples in the span and the op (or "barrier wait", "outside graphs", "unknown") most named. */
    public record Thread(int tid, long samples, String op) {}

    /** The samples outside the exact windows and their per-op shares, the way {@link #ops} are. */
    public record Between(long samples, double unknown, List<Op> ops) {
        public static final Between EMPTY = new Between(0, 0, List.of());

        public Between {
            ops = List.copyOf(ops);
        }
    }

    public boolean running() {
        return periodNs > 0;
    }

    /** Samples per second per busy CPU. */
    public double hz() {
        return periodNs > 0 ? 1e9 / periodNs : 0;
    }

    /** The op's share of the op samples, NaN when no sample named it. */
    public double shareOf(String op) {
        for (Op o : ops) {
            if (o.op().equals(op)) {
                return o.share();
            }
        }
        return Double.NaN;
    }

    /** The op most samples of {@code tid} named in the span, null when it had none. */
    public String opOf(int tid) {
        for (Thread t : threads) {
            if (t.tid() == tid) {
                return t.op();
            }
        }
        return null;
    }

    /** The same figures with the run's samples outside the windows. */
    public OpSampleTotals withBetween(Between newBetween) {
        return new OpSampleTotals(periodNs, samples, unknown, barrierWait, outsideGraphs, ops, threads,
                learnedSamples, learnedLines, newBetween);
    }
}
