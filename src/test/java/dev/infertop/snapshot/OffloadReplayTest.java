package dev.infertop.snapshot;

import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.view.OffloadFixtures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A snapshot's summary.json carries the offload figures, and a replay reads them back as they were. */
class OffloadReplayTest {
    @TempDir
    Path temp;

    @Test
    void replayRebuildsTheOffloadFigures() throws Exception {
        SnapshotContent base = SnapshotFixtures.content();
        OffloadTotals offload = OffloadFixtures.offload();
        Snapshot withOffload = base.last().withFigures(f -> f.withOffload(offload));
        SnapshotContent content = new SnapshotContent(withOffload, base.window(), base.tensorNames(),
                base.histograms(), base.ticks(), base.trigger(), base.createdEpochMs(), base.infertopVersion(),
                base.threadNames(), null);
        Path dir = temp.resolve("snap");
        SnapshotDirectoryWriter.write(dir, content);
        Snapshot replayed = SummarySnapshot.of(SnapshotDirectory.open(dir));
        assertEquals(offload, replayed.total().offload());
    }
}
