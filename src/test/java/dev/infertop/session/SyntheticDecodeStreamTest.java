package dev.infertop.session;

import dev.infertop.io.ConfigFiles;
import dev.infertop.model.BackendNames;
import dev.infertop.model.OpTotals;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.process.layout.CalibratedLayout;
import dev.infertop.process.layout.OpTable;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The collector warm-up only helps if its stream takes the paths real records take: decoded without a
 * malformed record, every graph attributed to its node groups (not "unattributed"), fused norms seen as one
 * group.
 */
class SyntheticDecodeStreamTest {
    static final List<String> OPS = List.of("NONE", "ADD", "MUL", "RMS_NORM", "MUL_MAT", "MUL_MAT_ID", "CPY",
            "CONT", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE", "GET_ROWS", "SOFT_MAX", "ROPE", "UNARY", "GLU");
    private static final int COMPUTE = 16;

    static CalibratedLayout layout(List<String> ops) {
        List<Integer> empty = CalibratedLayout.EMPTY_OP_NAMES.stream().map(ops::indexOf).filter(i -> i >= 0).toList();
        return new CalibratedLayout("libggml-base.so", null, null, null, new OpTable(ops, List.of("ABS", "SILU")),
                null, 0, COMPUTE, empty);
    }

    private record Run(Snapshot last, int shown, long malformed) {}

    private static final int TICKS = 30;
    private static final int CALLS_PER_TICK = 10;

    /** The stream through a pipeline built as a traced session builds it, a snapshot every CALLS_PER_TICK calls. */
    private static Run run(CalibratedLayout layout) {
        BackendNames backends = ConfigFiles.backendNames();
        Pipeline pipeline = Pipeline.build(layout, backends, 0, () -> 0,
                (signature, groups, ids, layers) -> false, address -> "");
        List<Snapshot> shown = new ArrayList<>();
        Snapshot last = null;
        long startNs = 1_000_000_000L;
        pipeline.aggregator().start(startNs);
        try (SyntheticDecodeStream stream = new SyntheticDecodeStream(pipeline.decoder(), layout,
                backends.guidOf("CPU"), startNs)) {
            for (int tick = 0; tick < TICKS; tick++) {
                for (int call = 0; call < CALLS_PER_TICK; call++) {
                    stream.nextCall();
                }
                last = pipeline.aggregator().snapshot(stream.nowNs(), RunState.RUNNING,
                        new TargetInfo(1, "warm-up", null, List.of()), 0, List.of());
                shown.add(last);
            }
        }
        return new Run(last, shown.size(), pipeline.decoder().malformedRecords());
    }

    @Test
    void everyGraphIsAttributedAndEveryRecordDecodes() {
        Run run = run(layout(OPS));
        assertEquals(0, run.malformed());
        assertEquals(TICKS, run.shown());
        Snapshot last = run.last();
        int calls = TICKS * CALLS_PER_TICK;
        int prefills = (calls + SyntheticDecodeStream.PREFILL_EVERY - 1) / SyntheticDecodeStream.PREFILL_EVERY;
        assertEquals(calls - prefills, last.total().tokens().tokensDecode());
        assertEquals(prefills, last.total().tokens().prefillCalls());
        assertEquals(calls, last.total().cpuGraphs().computes());
        // A graph is finished when the next begins: all but the last one are counted, none unattributed.
        assertEquals(calls - 1, last.total().operators().graphsAttributed());
        assertEquals(0, last.total().operators().graphsUnattributed());
        Map<String, OpTotals> ops = last.total().operators().ops().stream()
                .collect(Collectors.toMap(OpTotals::op, Function.identity()));
        // 3 layers × 9 (q, k, v, kq, kqv, out, gate, up, down) + the output: 28 MUL_MATs a graph; a fused
        // RMS_NORM+MUL per norm: 2 a layer + the last.
        assertEquals(28L * (calls - 1), ops.get("MUL_MAT").groups());
        assertNotNull(ops.get("RMS_NORM+MUL"), "the fused norm is one group: " + ops.keySet());
        assertEquals(7L * (calls - 1), ops.get("RMS_NORM+MUL").groups());
        assertEquals(2 * 7L * (calls - 1), ops.get("RMS_NORM+MUL").nodes());
        assertTrue(ops.get("MUL_MAT").workNs() > 0 && ops.get("MUL_MAT").waitNs() > 0, "work and barrier wait");
        assertEquals(2, last.total().operators().threads().size(), "two worker threads");
    }

    @Test
    void aReleaseWithoutGluStillAttributesEveryGraph() {
        Run run = run(layout(OPS.subList(0, OPS.size() - 1)));
        assertEquals(0, run.last().total().operators().graphsUnattributed());
        assertTrue(run.last().total().operators().ops().stream().anyMatch(op -> op.op().equals("SILU")),
                "UNARY nodes are named by their unary op");
    }

    @Test
    void withoutTheOperatorLayerOnlyTokensAndGraphsFlow() {
        Run run = run(null);
        assertEquals(0, run.malformed());
        assertTrue(run.last().total().tokens().tokensDecode() > 0);
        assertEquals(0, run.last().total().operators().graphsAttributed());
    }
}
