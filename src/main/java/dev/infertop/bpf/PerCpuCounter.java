package dev.infertop.bpf;

import dev.infertop.ffi.LibBpf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Reads a one-slot BPF_MAP_TYPE_PERCPU_ARRAY of u64 counters (e.g. lost_events) and sums the CPUs. */
public final class PerCpuCounter implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final int mapFd;
    private final int possibleCpus;
    private final MemorySegment key;
    private final MemorySegment values;

    public PerCpuCounter(int mapFd) {
        this.mapFd = mapFd;
        try {
            this.possibleCpus = (int) LibBpf.libbpf_num_possible_cpus$handle().invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        this.key = arena.allocate(ValueLayout.JAVA_INT);
        this.values = arena.allocate(8L * Math.max(1, possibleCpus), 8);
    }

    public synchronized long sum() {
        int rc;
        try {
            rc = (int) LibBpf.bpf_map_lookup_elem$handle().invokeExact(mapFd, key, values);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            return 0;
        }
        long total = 0;
        for (int cpu = 0; cpu < possibleCpus; cpu++) {
            total += values.getAtIndex(ValueLayout.JAVA_LONG, cpu);
        }
        return total;
    }

    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
