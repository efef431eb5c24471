package dev.infertop.agg;

import org.HdrHistogram.Histogram;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Each tick's interval histograms, per tag (ttft, tpot, one per op type), kept for a snapshot's HdrHistogram
 * interval log. Bounded: past {@code maxIntervals} per tag the oldest interval is folded into a base histogram
 * that the log writes first, so the log still adds up to the whole run (the same percentiles as the totals)
 * while memory stays flat. Collector thread writes; {@link #copy} is taken there too.
 */
public final class IntervalHistograms {
    public static final int DEFAULT_MAX_INTERVALS = 600;

    private final int maxIntervals;
    private final Map<String, Tagged> byTag = new LinkedHashMap<>();
    private long intervalStartMs;
    private long intervalEndMs;

    public IntervalHistograms(int maxIntervals) {
        this.maxIntervals = Math.max(1, maxIntervals);
    }

    private static final class Tagged {
        Histogram base;
        final ArrayDeque<Histogram> intervals = new ArrayDeque<>();
    }

    /** The wall-clock span (epoch ms) of the intervals added next. */
    public void beginInterval(long startEpochMs, long endEpochMs) {
        intervalStartMs = startEpochMs;
        intervalEndMs = endEpochMs;
    }

    /** Keeps a copy of one tag's interval histogram (empty ones are skipped: they add nothing). */
    public void add(String tag, Histogram interval) {
        if (interval == null || interval.getTotalCount() == 0) {
            return;
        }
        Histogram copy = interval.copy();
        copy.setStartTimeStamp(intervalStartMs);
        copy.setEndTimeStamp(intervalEndMs);
        copy.setTag(logTag(tag));
        Tagged tagged = byTag.computeIfAbsent(copy.getTag(), t -> new Tagged());
        tagged.intervals.addLast(copy);
        if (tagged.intervals.size() > maxIntervals) {
            Histogram oldest = tagged.intervals.removeFirst();
            if (tagged.base == null) {
                tagged.base = oldest;
            } else {
                tagged.base.add(oldest);
                tagged.base.setEndTimeStamp(oldest.getEndTimeStamp());
            }
        }
    }

    /**
     * A tag as an HdrHistogram log can hold it: the log's lines are comma-separated and its tools split on
     * white space, so both become '_'.
     */
    public static String logTag(String tag) {
        return tag.replaceAll("[\\s,=]", "_");
    }

    /** Every tag's intervals, oldest first (the folded base first), as histograms the caller may keep. */
    public Map<String, List<Histogram>> copy() {
        Map<String, List<Histogram>> result = new LinkedHashMap<>();
        for (Map.Entry<String, Tagged> entry : byTag.entrySet()) {
            List<Histogram> list = new ArrayList<>();
            if (entry.getValue().base != null) {
                list.add(entry.getValue().base.copy());
            }
            list.addAll(entry.getValue().intervals); // never modified once added
            result.put(entry.getKey(), List.copyOf(list));
        }
        return result;
    }
}
