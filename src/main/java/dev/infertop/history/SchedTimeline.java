package dev.infertop.history;

/**
 * The sched layer's thread states as flight-recorder slices, for a snapshot's timeline: per off-CPU record,
 * the thread's run before it left the CPU, its sleep, and its wait for a CPU; the culprit records that follow
 * name, on the wait's slice, the task that ran there longest meanwhile. Allocation-free per record: labels
 * are allocated once per state and per distinct culprit comm. Single writer: the collector thread.
 */
public final class SchedTimeline {
    /** Threads whose last wait can still be named; more threads' waits stay unnamed. */
    static final int THREADS = 256;
    static final long MAX_PACKED_NS = 0xffff_ffffL;

    public static final String RUNNING = "running";
    public static final String RUNNABLE = "off-CPU (runnable)";
    public static final String SLEEPING = "off-CPU (sleeping)";

    private final FlightRecorder flight;
    private final int runningLabel;
    private final int runnableLabel;
    private final int sleepingLabel;

    // Per thread: the record number of its last wait for a CPU (-1 none) and the culprit time named on it.
    private final int[] tids = new int[THREADS];
    private final long[] lastWaitRecord = new long[THREADS];
    private final long[] namedNs = new long[THREADS];
    private int threadCount;

    public SchedTimeline(FlightRecorder flight) {
        this.flight = flight;
        runningLabel = flight.label(RUNNING);
        runnableLabel = flight.label(RUNNABLE);
        sleepingLabel = flight.label(SLEEPING);
    }

    /**
     * One stretch off the CPU, [offNs, onNs], with {@code wakeAtNs} already resolved as the sched layer's aggregator
     * splits it (offNs when preempted), after {@code ranNs} on the CPU.
     */
    public void onSchedOff(int tid, long offNs, long onNs, long wakeAtNs, long ranNs) {
        if (ranNs > 0) {
            flight.record(FlightRecorder.Kind.THREAD_STATE, tid, offNs - ranNs, offNs, runningLabel, -1, 0);
        }
        if (wakeAtNs > offNs) {
            flight.record(FlightRecorder.Kind.THREAD_STATE, tid, offNs, wakeAtNs, sleepingLabel, -1, 0);
        }
        int slot = slot(tid);
        if (onNs > wakeAtNs) {
            if (slot >= 0) {
                lastWaitRecord[slot] = flight.recordsWritten();
                namedNs[slot] = 0;
            }
            flight.record(FlightRecorder.Kind.THREAD_STATE, tid, wakeAtNs, onNs, runnableLabel, -1, 0);
        } else if (slot >= 0) {
            lastWaitRecord[slot] = -1;
        }
    }

    /** A task ({@code comm}, process {@code pid}) ran {@code ns} on the CPU thread {@code tid} last waited for. */
    public void onCulprit(int tid, long ns, int pid, String comm) {
        int slot = slot(tid);
        if (slot < 0 || lastWaitRecord[slot] < 0 || ns <= namedNs[slot]) {
            return;
        }
        long packed = ((long) pid << 32) | Math.min(ns, MAX_PACKED_NS);
        if (flight.amend(lastWaitRecord[slot], flight.label(comm), packed)) {
            namedNs[slot] = ns;
        }
    }

    /** The culprit's pid from a THREAD_STATE record's value. */
    public static int culpritPid(long value) {
        return (int) (value >>> 32);
    }

    /** The time the culprit ran, from a THREAD_STATE record's value. */
    public static long culpritNs(long value) {
        return value & MAX_PACKED_NS;
    }

    private int slot(int tid) {
        for (int i = 0; i < threadCount; i++) {
            if (tids[i] == tid) {
                return i;
            }
        }
        if (threadCount == THREADS) {
            return -1;
        }
        tids[threadCount] = tid;
        lastWaitRecord[threadCount] = -1;
        return threadCount++;
    }
}
