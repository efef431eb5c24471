package dev.infertop.process.layout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A small ggml context on a buffer this JVM owns. Every struct ggml creates in it (tensors, graphs, their
 * arrays) lies inside that buffer, so calibration reads target structs through a bounded segment and never
 * dereferences an address ggml handed back without checking it first. Closing frees the context.
 */
final class ProbeContext implements AutoCloseable {
    /** Enough for the ~20 small tensors and two graphs calibration makes, even with default-size graphs. */
    static final long BUFFER_BYTES = 2L << 20;
    /** ggml requires GGML_MEM_ALIGN (16); a cache line is more than enough. */
    private static final long BUFFER_ALIGNMENT = 64;

    private final GgmlLibrary ggml;
    private final Arena arena;
    private final MemorySegment buffer;
    private final MemorySegment context;

    private ProbeContext(GgmlLibrary ggml, Arena arena, MemorySegment buffer, MemorySegment context) {
        this.ggml = ggml;
        this.arena = arena;
        this.buffer = buffer;
        this.context = context;
    }

    static ProbeContext open(GgmlLibrary ggml, boolean noAlloc) throws CalibrationException {
        Arena arena = Arena.ofConfined();
        try {
            MemorySegment buffer = arena.allocate(BUFFER_BYTES, BUFFER_ALIGNMENT);
            return new ProbeContext(ggml, arena, buffer, ggml.init(buffer, noAlloc));
        } catch (CalibrationException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    MemorySegment context() {
        return context;
    }

    /** Where ggml placed {@code pointer}, as an offset into our buffer. */
    long offsetOf(MemorySegment pointer) throws CalibrationException {
        long offset = pointer.address() - buffer.address();
        if (offset < 0 || offset >= buffer.byteSize()) {
            throw CalibrationException.of(ggml.path(), "ggml returned 0x" + Long.toHexString(pointer.address())
                    + ", outside the context buffer it was given");
        }
        return offset;
    }

    boolean contains(long address) {
        return address >= buffer.address() && address < buffer.address() + buffer.byteSize();
    }

    /** The {@code bytes} bytes at {@code pointer}, which must lie inside the context buffer. */
    MemorySegment view(MemorySegment pointer, long bytes) throws CalibrationException {
        long offset = offsetOf(pointer);
        if (bytes < 0 || offset + bytes > buffer.byteSize()) {
            throw CalibrationException.of(ggml.path(), "a struct at buffer offset " + offset + " would extend past"
                    + " the " + buffer.byteSize() + "-byte context buffer");
        }
        // SAFETY: a slice of our own buffer, bounds-checked above: never memory outside it.
        return buffer.asSlice(offset, bytes);
    }

    @Override
    public void close() {
        try {
            ggml.free(context);
        } finally {
            arena.close();
        }
    }
}
