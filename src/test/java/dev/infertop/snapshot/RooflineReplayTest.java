package dev.infertop.snapshot;

import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.model.RooflineTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.view.RooflinePanelTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Replay gives the roofline panel the summary's roofline: the same ops, decode figures and ceilings. */
class RooflineReplayTest {
    @TempDir
    Path temp;

    private Snapshot replayed(RooflineTotals roofline) throws Exception {
        SnapshotContent base = SnapshotFixtures.content();
        SnapshotContent content = new SnapshotContent(RooflinePanelTest.with(base.last(), roofline), base.window(),
                base.tensorNames(), base.histograms(), base.ticks(), base.trigger(), base.createdEpochMs(),
                base.infertopVersion(), base.threadNames(), null);
        Path dir = temp.resolve("snap-" + System.nanoTime());
        SnapshotDirectoryWriter.write(dir, content);
        return SummarySnapshot.of(SnapshotDirectory.open(dir));
    }

    @Test
    void replayRebuildsTheRooflineFromTheSummary() throws Exception {
        RooflineTotals written = RooflinePanelTest.totals(RooflinePanelTest.CEILINGS);
        RooflineTotals read = replayed(written).total().roofline();
        // Every figure is kept exactly here: wall times are whole milliseconds, ceilings whole GB/s and GFLOP/s.
        assertEquals(written, read);
        RooflineTotals without = replayed(RooflinePanelTest.totals(null)).interval().roofline();
        assertNull(without.ceilings());
        assertEquals(written.ops(), without.ops());
    }

    @Test
    void aSummaryWithoutRooflineReplaysAnEmptyOne() throws Exception {
        assertEquals(RooflineTotals.EMPTY, replayed(RooflineTotals.EMPTY).total().roofline());
    }
}
