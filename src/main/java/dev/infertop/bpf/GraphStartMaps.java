package dev.infertop.bpf;

import dev.infertop.ffi.LibBpf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The graph layer's per-thread start maps ({@code graph_start_by_tid}, {@code cpu_graph_start_by_tid} in
 * native/graph.bpf.h), read at each tick: the graphs begun and not ended yet. A few entries (one per thread
 * computing a graph), read with one key walk each: a syscall per entry, a tick at a time.
 */
public final class GraphStartMaps implements GraphsInFlight, AutoCloseable {
    static final String BACKEND_MAP = "graph_start_by_tid";
    static final String CPU_MAP = "cpu_graph_start_by_tid";
    /** struct graph_start: u64 start_ns, u64 backend, u8 guid[16], s32 n_nodes (+ padding). */
    static final int BACKEND_VALUE_BYTES = 40;
    static final int BACKEND_GUID = 16;
    /** struct cpu_graph_start: u64 start_ns, u64 cgraph, s32 n_nodes (+ padding). */
    static final int CPU_VALUE_BYTES = 24;
    /** At most this many entries a map per tick: a map of stale threads must not make a tick slow. */
    static final int MAX_ENTRIES_READ = 256;

    private static final ValueLayout.OfLong LONG_BIG_ENDIAN = ValueLayout.JAVA_LONG_UNALIGNED
            .withOrder(java.nio.ByteOrder.BIG_ENDIAN);

    private final Arena arena = Arena.ofShared();
    private final int backendFd;
    private final int cpuFd;
    private final MemorySegment key;
    private final MemorySegment next;
    private final MemorySegment value;

    public GraphStartMaps(BpfObject object) throws BpfException {
        this.backendFd = object.mapFd(BACKEND_MAP);
        this.cpuFd = object.mapFd(CPU_MAP);
        this.key = arena.allocate(ValueLayout.JAVA_INT);
        this.next = arena.allocate(ValueLayout.JAVA_INT);
        this.value = arena.allocate(Math.max(BACKEND_VALUE_BYTES, CPU_VALUE_BYTES), 8);
    }

    @Override
    public synchronized void forEach(Each each) {
        if (!arena.scope().isAlive()) {
            return;
        }
        walk(backendFd, false, each);
        walk(cpuFd, true, each);
    }

    private void walk(int fd, boolean cpuPath, Each each) {
        MemorySegment previous = MemorySegment.NULL;
        for (int i = 0; i < MAX_ENTRIES_READ; i++) {
            int rc;
            try {
                rc = (int) LibBpf.bpf_map_get_next_key$handle().invokeExact(fd, previous, next);
                if (rc != 0) {
                    return; // -ENOENT: no more keys (or the map is gone: nothing in flight we can tell)
                }
                key.set(ValueLayout.JAVA_INT, 0, next.get(ValueLayout.JAVA_INT, 0));
                previous = key;
                rc = (int) LibBpf.bpf_map_lookup_elem$handle().invokeExact(fd, key, value);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (rc != 0) {
                continue; // ended between the key walk and the lookup: its record is in the ring
            }
            // SAFETY: value holds the map's value as the kernel copied it, sized for the larger struct.
            long startNs = value.get(ValueLayout.JAVA_LONG, 0);
            long guidHigh = cpuPath ? 0 : value.get(LONG_BIG_ENDIAN, BACKEND_GUID);
            long guidLow = cpuPath ? 0 : value.get(LONG_BIG_ENDIAN, BACKEND_GUID + 8);
            each.graph(cpuPath, key.get(ValueLayout.JAVA_INT, 0), startNs, guidHigh, guidLow);
        }
    }

    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
