package dev.infertop.diff;

import com.fasterxml.jackson.databind.JsonNode;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * One side of a diff as read: the run's totals (summary.json, or a {@code --json} log's final object: the same
 * fields), the snapshot's own description when there is one, and per interval of the run the count and mean of
 * each timed thing, keyed like latency.hlog's tags ({@code tpot}, {@code ttft}, {@code op:MUL_MAT}).
 *
 * @param source     "snapshot" or "json log"
 * @param meta       summary.json's {@code snapshot} object (model and library identity), or a missing node
 * @param intervals  per tag, its intervals in time order (those with nothing counted left out)
 * @param histograms per tag, the run's whole distribution (a snapshot's latency.hlog added up); empty for a log
 */
public record RunRecord(Path path, String source, JsonNode totals, JsonNode meta, Map<String, List<Interval>> intervals,
                        Map<String, Histogram> histograms) {

    public RunRecord {
        intervals = Map.copyOf(intervals);
        histograms = Map.copyOf(histograms);
    }

    /** One interval of one tag: its start in seconds into the run, how many values it counted, their mean. */
    public record Interval(double startS, long count, double meanMs) {}

    public List<Interval> intervals(String tag) {
        return intervals.getOrDefault(tag, List.of());
    }
}
