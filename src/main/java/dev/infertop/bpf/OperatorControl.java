package dev.infertop.bpf;


import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Collection;

/**
 * The operator layer's kernel switch (its control map: on/off, every Nth graph, thread filter): what it sets in
 * the BPF object besides attaching probes. Not thread-safe: {@link OperatorKernelSide} calls it under the probe
 * set's lock.
 */
final class OperatorControl {
    private final BpfObject object;
    private int every = 1;
    private boolean filterThreads;
    /** Between the overhead budget's sample windows: no graph is sampled while the per-thread probes are away. */
    private boolean paused;

    OperatorControl(BpfObject object) {
        this.object = object;
    }

    void every(int graphs) {
        every = Math.max(1, graphs);
    }

    void paused(boolean between) {
        paused = between;
    }

    boolean paused() {
        return paused;
    }

    /** Only these threads report (empty: all); written into the thread filter map now. */
    void threads(Collection<Integer> tids) throws BpfException {
        filterThreads = !tids.isEmpty();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment present = arena.allocate(1);
            present.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
            for (int tid : tids) {
                object.updateElement(InfertopProbes.THREAD_FILTER_MAP, tid, present);
            }
        }
    }

    void write(boolean enabled) throws BpfException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ControlLayout.OP_CONTROL_SIZE, 4);
            value.set(ValueLayout.JAVA_INT, ControlLayout.OP_CONTROL_ENABLED, enabled && !paused ? 1 : 0);
            value.set(ValueLayout.JAVA_INT, ControlLayout.OP_CONTROL_EVERY, every);
            value.set(ValueLayout.JAVA_INT, ControlLayout.OP_CONTROL_FILTER_THREADS, filterThreads ? 1 : 0);
            if (enabled && !paused) {
                // Forget the last graph read: user space may not hold its nodes any more.
                object.updateElement(InfertopProbes.WALK_MEMO_MAP, 0, arena.allocate(24, 8));
            }
            object.updateElement(InfertopProbes.OP_CONTROL_MAP, 0, value);
        }
    }
}
