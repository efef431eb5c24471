package dev.infertop.event;

import java.lang.foreign.MemorySegment;

/**
 * Receives each committed record of the probes' ring buffer (in {@link EventLayout}); must not keep
 * {@code data} beyond the call. Here, not in bpf, so the ring buffer (bpf) depends on the event format and
 * not the other way round.
 */
@FunctionalInterface
public interface RecordHandler {
    void onRecord(MemorySegment data, long offset, int lengthBytes);
}
