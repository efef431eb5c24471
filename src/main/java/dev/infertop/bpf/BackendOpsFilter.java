package dev.infertop.bpf;

import dev.infertop.model.BackendNames;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Tells native/backends.bpf.h which backend not to count ops for: the CPU, whose graphs the operator layer
 * reads node by node anyway. Without it every CPU graph would be walked twice.
 */
public final class BackendOpsFilter {
    public static final String SKIP_MAP = "backend_ops_skip";
    /** ggml_backend_cpu_guid() in every release so far (config/backends.conf names it CPU). */
    static final long[] CPU_GUID = {0xaa67c74396e6a38aL, 0xe3afea9236bcfc89L};

    private BackendOpsFilter() {}

    /** Writes the CPU backend's GUID (from backends.conf, else ggml's) into the skip map; call after load. */
    public static void skipCpu(BpfObject object, BackendNames names) throws BpfException {
        long[] guid = names.guidOf("CPU");
        if (guid == null) {
            guid = CPU_GUID;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(16, 8);
            ValueLayout.OfLong bigEndian = ValueLayout.JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN);
            value.set(bigEndian, 0, guid[0]);
            value.set(bigEndian, 8, guid[1]);
            object.updateElement(SKIP_MAP, 0, value);
        }
    }
}
