package dev.infertop.agg;

/**
 * One op's (or tensor group's) figures: counters kept once ({@link Counts}) and its wall times per group,
 * counted by {@link IntervalRecorder} (histograms built from it only for the readers that want one).
 */
final class OpStats {
    static final int GROUPS = 0;
    static final int NODES = 1;
    static final int WORK_NS = 2;
    static final int WAIT_NS = 3;
    static final int WALL_NS = 4;

    final String name;
    final Counts counts = new Counts(5);
    String lastShape = "";
    final IntervalRecorder recorder;

    OpStats(String name, int significantDigits) {
        this.name = name;
        this.recorder = new IntervalRecorder(significantDigits);
    }

    void recordGroup(int nodes, long wallNs, String shape) {
        counts.add(GROUPS, 1);
        counts.add(NODES, nodes);
        counts.add(WALL_NS, wallNs);
        recorder.recordValue(wallNs);
        lastShape = shape;
    }

    void recordThread(long workNs, long waitNs) {
        counts.add(WORK_NS, workNs);
        counts.add(WAIT_NS, waitNs);
    }
}
