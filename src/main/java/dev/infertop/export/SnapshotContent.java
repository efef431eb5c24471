package dev.infertop.export;

import dev.infertop.history.FlightRecorder;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.model.Snapshot;

import java.util.List;
import java.util.Map;

/**
 * Everything one snapshot directory is written from, copied on the collector thread so a writer thread can
 * take its time: the last tick (its totals become summary.json), the flight recorder's window, every tag's
 * interval histograms, and the run's per-tick op times.
 *
 * @param tensorNames names of the tensor ids the window's op slices carry
 * @param trigger     what asked for it: "key", "SIGUSR1", "every 5 s", "exit"
 * @param threadNames the traced threads' names (comm) when they could be read, by tid
 * @param dag         the operator DAG of the last traced decode graph, or null when there is none
 */
public record SnapshotContent(
        Snapshot last,
        FlightRecorder.Window window,
        Map<Integer, String> tensorNames,
        Map<String, List<IntervalHistograms.Encoded>> histograms,
        List<TickSample> ticks,
        String trigger,
        long createdEpochMs,
        String infertopVersion,
        Map<Integer, String> threadNames,
        OperatorDag dag) {

    public SnapshotContent {
        tensorNames = Map.copyOf(tensorNames);
        threadNames = Map.copyOf(threadNames);
        histograms = Map.copyOf(histograms);
        ticks = List.copyOf(ticks);
    }

    /**
     * One tick of the run: its tokens and each op type's wall time, for the report's op time per token across
     * the run.
     */
    public record TickSample(double runSeconds, long tokens, double decodeTokensPerSecond, Map<String, Long> opWallNs) {
        public TickSample {
            opWallNs = Map.copyOf(opWallNs);
        }
    }
}
