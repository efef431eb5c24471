package dev.infertop.bpf;

import dev.infertop.ffi.LibBpf;

import java.lang.foreign.MemorySegment;

/** One attached probe (a uprobe, a tracepoint program); closing it detaches it at once. */
public interface ProbeLink extends AutoCloseable {
    @Override
    void close();

    /** How many probes it holds (an uprobe-multi link holds one per offset). */
    default int probeCount() {
        return 1;
    }

    /** Detaches and frees a libbpf link (NULL: nothing to do); returns NULL, for the holder's field. */
    static MemorySegment destroy(MemorySegment link) {
        if (!link.equals(MemorySegment.NULL)) {
            try {
                int ignored = (int) LibBpf.bpf_link__destroy$handle().invokeExact(link);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
        return MemorySegment.NULL;
    }
}
