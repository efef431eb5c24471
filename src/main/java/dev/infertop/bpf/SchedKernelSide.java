package dev.infertop.bpf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The sched layer's kernel side: before its programs attach (again), state from before is dropped: no thread
 * waits, and what threads did before now is not counted (a thread off the CPU across a pause would show the
 * pause).
 */
final class SchedKernelSide implements KernelSide {
    private final BpfObject object;

    SchedKernelSide(KernelSide.LayerHandle layer) {
        this.object = layer.object();
    }

    @Override
    public void beforeFirstAttach() throws BpfException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG);
            object.updateElement(InfertopProbes.SCHED_WAITING_MAP, 0, value);
            // SAFETY: System.nanoTime() is CLOCK_MONOTONIC on Linux, the clock of bpf_ktime_get_ns().
            value.set(ValueLayout.JAVA_LONG, 0, System.nanoTime());
            object.updateElement(InfertopProbes.SCHED_EPOCH_MAP, 0, value);
        }
    }
}
