package dev.infertop.bpf;

import dev.infertop.event.RecordHandler;

/**
 * Where the collector's records come from: the BPF ring buffer ({@link RingBufferReader}), or, in tests, a
 * stand-in. Drained and waited on by one thread.
 */
public interface RecordSource {
    /** Hands every record available now to {@code handler}; returns how many. */
    int drain(RecordHandler handler);

    /** Bytes written and not yet drained. */
    long backlogBytes();

    long capacityBytes();

    /** Waits up to {@code timeoutMs} for records (returns early when some come, or on {@link #wakeUp}). */
    void await(int timeoutMs);

    /** Ends the current and every later {@link #await} at once (from any thread): the reader is stopping. */
    default void wakeUp() {}
}
