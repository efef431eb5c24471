package dev.infertop.model;

/** One worker thread over some span: node groups run, time working and waiting at barriers. */
public record ThreadTotals(int tid, long groups, long workNs, long barrierWaitNs, int lastCpu, long migrations) {
    /** Work share of the time this thread spent in graphs. */
    public double workFraction() {
        long total = workNs + barrierWaitNs;
        return total == 0 ? 0.0 : (double) workNs / total;
    }
}
