package dev.infertop.snapshot;

import dev.infertop.export.SnapshotContent;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.model.BackendBreakdown;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Replay gives the backends panel the summary's other-backend ops: timed ones with their time, counted ones without. */
class BackendReplayTest {
    @TempDir
    Path temp;

    @Test
    void replayRebuildsOtherBackendsOpsFromTheSummary() throws Exception {
        SnapshotContent base = SnapshotFixtures.content();
        Snapshot s = base.last();
        List<BackendTotals> backends = new ArrayList<>(s.total().backends());
        backends.add(new BackendTotals("BLAS", 12, 48, 6_500_000));
        List<BackendOps> ops = List.of(new BackendOps("BLAS", 12, 6_500_000, List.of(
                new BackendOps.Op("MUL_MAT", 36, 6_250_000, true), new BackendOps.Op("VIEW", 12, 0, false))));
        Snapshot withBlas = s.withFigures(f -> f.withBackends(backends, ops));
        SnapshotContent content = new SnapshotContent(withBlas, base.window(), base.tensorNames(), base.histograms(),
                base.ticks(), base.trigger(), base.createdEpochMs(), base.infertopVersion(), base.threadNames(), null);
        Path dir = temp.resolve("snap");
        SnapshotDirectoryWriter.write(dir, content);
        Snapshot replayed = SummarySnapshot.of(SnapshotDirectory.open(dir));
        assertEquals(ops, replayed.total().backendOps());
        assertEquals(ops, replayed.interval().backendOps());
        BackendBreakdown blas = BackendBreakdown.of(replayed.total()).stream().filter(b -> b.backend().equals("BLAS"))
                .findFirst().orElseThrow();
        assertEquals(new BackendBreakdown("BLAS", 12, 48, 6_500_000, ops.getFirst().ops(), null), blas);
    }

    @Test
    void replayKeepsADeviceBackendsNodeByNodeDispatchViewsIncluded() throws Exception {
        SnapshotContent base = SnapshotFixtures.content();
        Snapshot s = base.last();
        List<BackendTotals> backends = new ArrayList<>(s.total().backends());
        backends.add(new BackendTotals("Vulkan", 10, 60, 2_000_000));
        BackendOps.NodeDispatch dispatch = new BackendOps.NodeDispatch(10, List.of(
                new BackendOps.OpDispatch("MUL_MAT", 30, 0, false), new BackendOps.OpDispatch("VIEW", 20, 0, true),
                new BackendOps.OpDispatch("MUL", 0, 10, false)));
        List<BackendOps> ops = List.of(new BackendOps("Vulkan", 10, 2_000_000, List.of(
                new BackendOps.Op("MUL_MAT", 30, 0, false), new BackendOps.Op("VIEW", 20, 0, false),
                new BackendOps.Op("MUL", 10, 0, false)), dispatch));
        Snapshot withVulkan = s.withFigures(f -> f.withBackends(backends, ops));
        SnapshotContent content = new SnapshotContent(withVulkan, base.window(), base.tensorNames(), base.histograms(),
                base.ticks(), base.trigger(), base.createdEpochMs(), base.infertopVersion(), base.threadNames(), null);
        Path dir = temp.resolve("snap");
        SnapshotDirectoryWriter.write(dir, content);
        BackendOps.NodeDispatch replayed = SummarySnapshot.of(SnapshotDirectory.open(dir)).total().backendOps()
                .getFirst().dispatch();
        assertEquals(java.util.Set.copyOf(dispatch.ops()), java.util.Set.copyOf(replayed.ops()));
        assertEquals(30, replayed.dispatches());
        assertEquals(10, replayed.fusedNodes());
    }
}
