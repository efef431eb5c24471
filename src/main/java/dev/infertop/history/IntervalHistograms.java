package dev.infertop.history;

import org.HdrHistogram.Histogram;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Each tick's interval histograms, per tag (ttft, tpot, one per op type), kept for a snapshot's HdrHistogram
 * interval log. Kept in HdrHistogram's run-length encoding (zero runs folded: a few hundred bytes where the
 * histogram itself is ~20 KB), not deflated: this runs on every tick for every tag while the target runs,
 * and deflate was most of a tick's cost; the log's compressed form is made only when a snapshot is written.
 * Bounded: past {@code maxIntervals} per tag the oldest interval is folded
 * into a base histogram that the log writes first, so the log still adds up to the whole run (the same
 * percentiles as the totals) while memory stays flat. Collector thread writes; {@link #copy} is taken there
 * too, and what it returns is immutable.
 */
public final class IntervalHistograms {
    public static final int DEFAULT_MAX_INTERVALS = 600;

    private final int maxIntervals;
    private final Map<String, Tagged> byTag = new LinkedHashMap<>();
    /** Reused for every encoding: sized for the largest histogram seen (tens of KB), not allocated per tag per tick. */
    private ByteBuffer scratch = ByteBuffer.allocate(0);
    private long intervalStartMs;
    private long intervalEndMs;

    public IntervalHistograms(int maxIntervals) {
        this.maxIntervals = Math.max(1, maxIntervals);
    }

    /**
     * One interval of one tag: its wall-clock span (epoch ms), its max, its histogram in HdrHistogram's
     * uncompressed (run-length) encoding.
     */
    public record Encoded(long startMs, long endMs, long maxValue, byte[] encoded) {
        public Encoded {
            encoded = encoded.clone();
        }

        public static Encoded of(Histogram histogram) {
            return of(histogram, ByteBuffer.allocate(histogram.getNeededByteBufferCapacity()));
        }

        /** Encodes into {@code scratch} (at least the histogram's needed capacity), then copies what was used. */
        static Encoded of(Histogram histogram, ByteBuffer scratch) {
            scratch.clear();
            int length = histogram.encodeIntoByteBuffer(scratch);
            return new Encoded(histogram.getStartTimeStamp(), histogram.getEndTimeStamp(), histogram.getMaxValue(),
                    Arrays.copyOf(scratch.array(), length));
        }

        @Override
        public byte[] encoded() {
            return encoded.clone();
        }

        /** The interval's histogram, decoded again (with its start and end time stamps). */
        public Histogram decode() {
            Histogram histogram = Histogram.decodeFromByteBuffer(ByteBuffer.wrap(encoded), 0);
            histogram.setStartTimeStamp(startMs);
            histogram.setEndTimeStamp(endMs);
            return histogram;
        }
    }

    private static final class Tagged {
        Histogram base;
        final ArrayDeque<Encoded> intervals = new ArrayDeque<>();
    }

    /** The wall-clock span (epoch ms) of the intervals added next. */
    public void beginInterval(long startEpochMs, long endEpochMs) {
        intervalStartMs = startEpochMs;
        intervalEndMs = endEpochMs;
    }

    /** Keeps one tag's interval histogram, encoded (empty ones are skipped: they add nothing). */
    public void add(String tag, Histogram interval) {
        if (interval == null || interval.getTotalCount() == 0) {
            return;
        }
        long start = interval.getStartTimeStamp();
        long end = interval.getEndTimeStamp();
        interval.setStartTimeStamp(intervalStartMs);
        interval.setEndTimeStamp(intervalEndMs);
        int needed = interval.getNeededByteBufferCapacity();
        if (scratch.capacity() < needed) {
            scratch = ByteBuffer.allocate(needed);
        }
        Encoded encoded = Encoded.of(interval, scratch);
        interval.setStartTimeStamp(start);
        interval.setEndTimeStamp(end);
        Tagged tagged = byTag.computeIfAbsent(logTag(tag), t -> new Tagged());
        tagged.intervals.addLast(encoded);
        if (tagged.intervals.size() > maxIntervals) {
            Histogram oldest = tagged.intervals.removeFirst().decode();
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
        for (int i = 0; i < tag.length(); i++) {
            if (needsReplacing(tag.charAt(i))) {
                return UNSAFE_IN_TAG.matcher(tag).replaceAll("_");
            }
        }
        return tag; // nearly always (op names): no regex per tag per tick
    }

    private static final java.util.regex.Pattern UNSAFE_IN_TAG = java.util.regex.Pattern.compile("[\\s,=]");

    private static boolean needsReplacing(char c) {
        return c == ',' || c == '=' || Character.isWhitespace(c); // a superset of \s: the regex decides
    }

    /** Every tag's intervals, oldest first (the folded base first). */
    public Map<String, List<Encoded>> copy() {
        Map<String, List<Encoded>> result = new LinkedHashMap<>();
        for (Map.Entry<String, Tagged> entry : byTag.entrySet()) {
            List<Encoded> list = new ArrayList<>();
            if (entry.getValue().base != null) {
                list.add(Encoded.of(entry.getValue().base));
            }
            list.addAll(entry.getValue().intervals);
            result.put(entry.getKey(), List.copyOf(list));
        }
        return result;
    }
}
