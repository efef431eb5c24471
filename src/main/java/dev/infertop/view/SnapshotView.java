package dev.infertop.view;

import dev.infertop.model.Snapshot;

/** Where snapshots go: a batch text block, a JSON line, (later) the full-screen monitor. */
public interface SnapshotView extends AutoCloseable {
    void show(Snapshot snapshot);

    /**
     * Whether what this view writes to was closed by its reader (a pipe into {@code head}): tracing then
     * stops, as it would at {@code -n}, instead of printing into nothing with every probe attached.
     */
    default boolean outputClosed() {
        return false;
    }

    @Override
    default void close() {}
}
