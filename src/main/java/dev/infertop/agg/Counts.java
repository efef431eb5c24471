package dev.infertop.agg;

/**
 * Counters kept once, cumulative over the run; an interval's figure is the difference from the sample taken
 * when the previous interval was read (bpftop's {@code bpf_program.rs}: the run counter and the previous
 * sample, never a second interval counter added next to the first).
 */
final class Counts {
    private final long[] run;
    private final long[] previous;

    Counts(int counters) {
        run = new long[counters];
        previous = new long[counters];
    }

    void add(int counter, long value) {
        run[counter] += value;
    }

    /**
     * Adds to the run but to no interval: time that belongs before the current interval, which was already
     * shown (a record read after the tick it preceded).
     */
    void addBeforeInterval(int counter, long value) {
        run[counter] += value;
        previous[counter] += value;
    }

    /** The run so far. */
    long total(int counter) {
        return run[counter];
    }

    /** Since the last {@link #sample()}. */
    long interval(int counter) {
        return run[counter] - previous[counter];
    }

    long of(int counter, boolean totals) {
        return totals ? total(counter) : interval(counter);
    }

    /**
     * Adds {@code from}'s run and sample into this one's (a key folded into "other"): this one's interval
     * grows by exactly {@code from}'s.
     */
    void addAll(Counts from) {
        for (int i = 0; i < run.length; i++) {
            run[i] += from.run[i];
            previous[i] += from.previous[i];
        }
    }

    /** Ends the interval: the next one counts from here. */
    void sample() {
        System.arraycopy(run, 0, previous, 0, run.length);
    }
}
