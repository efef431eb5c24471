package dev.infertop.view;

import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hook that ends infertop's start (its priority, the start timeline) when the first interval is shown. */
class AfterFirstShownTest {
    @Test
    void runsItsActionOnceRightAfterTheFirstSnapshotIsShown() {
        List<String> events = new ArrayList<>();
        boolean[] closed = {false};
        SnapshotView inner = new SnapshotView() {
            @Override
            public void show(Snapshot snapshot) {
                events.add("show " + snapshot.sequence());
            }

            @Override
            public boolean outputClosed() {
                return true;
            }

            @Override
            public void close() {
                closed[0] = true;
            }
        };
        SnapshotView view = SnapshotView.afterFirstShown(inner, () -> events.add("first shown"));
        Snapshot snapshot = Fixtures.snapshot(LayerStatus.State.ON);
        view.show(snapshot);
        view.show(snapshot);
        assertEquals(List.of("show " + snapshot.sequence(), "first shown", "show " + snapshot.sequence()), events);
        assertTrue(view.outputClosed(), "asks the view it wraps");
        view.close();
        assertTrue(closed[0], "closes the view it wraps");
    }
}
