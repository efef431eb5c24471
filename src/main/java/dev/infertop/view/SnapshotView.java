package dev.infertop.view;

import dev.infertop.model.Snapshot;

/** Where snapshots go: a batch text block, a JSON line, (later) the full-screen monitor. */
public interface SnapshotView extends AutoCloseable {
    void show(Snapshot snapshot);

    @Override
    default void close() {}
}
