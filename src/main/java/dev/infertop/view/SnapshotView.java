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

    /** {@code view}, running {@code action} once, right after the first snapshot it shows. */
    static SnapshotView afterFirstShown(SnapshotView view, Runnable action) {
        return new SnapshotView() {
            private boolean shown;

            @Override
            public void show(Snapshot snapshot) {
                view.show(snapshot);
                if (!shown) {
                    shown = true;
                    action.run();
                }
            }

            @Override
            public boolean outputClosed() {
                return view.outputClosed();
            }

            @Override
            public void close() {
                view.close();
            }
        };
    }
}
