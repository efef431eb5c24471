package dev.infertop.history;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Each tick's interval histograms, per tag (ttft, tpot, one per op type), kept for a snapshot's HdrHistogram
 * interval log. Kept as the buckets counted and their counts ({@link HdrBuckets}, varint-coded: a few hundred
 * bytes where the histogram itself is ~20 KB), not as histograms: this runs on every tick for every tag while
 * the target runs, and building, clearing and encoding a histogram per op per tick was a visible share of
 * infertop's CPU with every graph traced (deflating it, before that, most of a tick's cost; measurements.md); a histogram and the log's
 * compressed form are made only when a snapshot is written.
 * Bounded: past {@code maxIntervals} per tag the oldest interval is folded
 * into a base histogram that the log writes first, so the log still adds up to the whole run (the same
 * percentiles as the totals) while memory stays flat. Collector thread writes; {@link #copy} is taken there
 * too, and what it returns is immutable.
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

    /**
     * One interval of one tag: its wall-clock span (epoch ms), its max, its buckets: the significant digits
     * (one byte), then from bucket 0 up, as HdrHistogram encodes its counts (without its 40-byte header), a
     * zig-zag LEB128 varint for each bucket counted (its count) or run of buckets not counted (minus its length).
     */
    public record Encoded(long startMs, long endMs, long maxValue, byte[] encoded) {
        public Encoded {
            encoded = encoded.clone();
        }

        /** A histogram's interval (lowest discernible value 1, as every infertop histogram). */
        public static Encoded of(Histogram histogram) {
            if (histogram.getLowestDiscernibleValue() != 1) {
                throw new IllegalArgumentException("a histogram with lowest discernible value "
                        + histogram.getLowestDiscernibleValue() + ": only 1 is kept");
            }
            HdrBuckets buckets = new HdrBuckets(histogram.getNumberOfSignificantValueDigits());
            BucketWriter writer = new BucketWriter(buckets.significantDigits());
            for (HistogramIterationValue value : histogram.recordedValues()) {
                writer.add(buckets.bucketOf(value.getValueIteratedTo()), value.getCountAtValueIteratedTo());
            }
            return new Encoded(histogram.getStartTimeStamp(), histogram.getEndTimeStamp(), histogram.getMaxValue(),
                    writer.bytes());
        }

        @Override
        public byte[] encoded() {
            return encoded.clone();
        }

        /** The interval's histogram (with its start and end time stamps). */
        public Histogram decode() {
            HdrBuckets buckets = new HdrBuckets(encoded[0]);
            Histogram histogram = new Histogram(buckets.significantDigits());
            int[] at = {1};
            int bucket = 0;
            while (at[0] < encoded.length) {
                long zigZag = readVarint(encoded, at);
                long value = (zigZag >>> 1) ^ -(zigZag & 1);
                if (value < 0) {
                    bucket += (int) -value; // a run of buckets not counted
                } else {
                    histogram.recordValueWithCount(buckets.lowestValueOf(bucket++), value);
                }
            }
            histogram.setStartTimeStamp(startMs);
            histogram.setEndTimeStamp(endMs);
            return histogram;
        }

        private static long readVarint(byte[] bytes, int[] at) {
            long value = 0;
            for (int shift = 0; ; shift += 7) {
                byte b = bytes[at[0]++];
                value |= (long) (b & 0x7f) << shift;
                if (b >= 0) {
                    return value;
                }
            }
        }
    }

    /** Writes the bucket form of {@link Encoded}, growing one array. */
    private static final class BucketWriter {
        private byte[] bytes = new byte[64];
        private int length;
        /** The bucket the next one written follows on from. */
        private int nextBucket;

        BucketWriter(int significantDigits) {
            bytes[length++] = (byte) significantDigits;
        }

        /** A bucket counted (count ≥ 1), after the last one added. */
        void add(int bucket, long count) {
            if (bucket > nextBucket) {
                writeZigZag(-(long) (bucket - nextBucket));
            }
            writeZigZag(count);
            nextBucket = bucket + 1;
        }

        private void writeZigZag(long value) {
            writeVarint((value << 1) ^ (value >> 63));
        }

        private void writeVarint(long value) {
            if (length + 10 > bytes.length) {
                bytes = Arrays.copyOf(bytes, bytes.length * 2);
            }
            while ((value & ~0x7fL) != 0) {
                bytes[length++] = (byte) ((value & 0x7f) | 0x80);
                value >>>= 7;
            }
            bytes[length++] = (byte) value;
        }

        byte[] bytes() {
            return Arrays.copyOf(bytes, length);
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

    /**
     * Keeps one tag's interval given as its first {@code n} buckets counted (in value order, as numbered by
     * {@code buckets}) and their counts, with its max (the highest value equivalent to its last bucket).
     */
    public void addBuckets(String tag, HdrBuckets buckets, int[] bucketNumbers, long[] counts, int n, long maxValue) {
        if (n == 0) {
            return;
        }
        BucketWriter writer = new BucketWriter(buckets.significantDigits());
        for (int i = 0; i < n; i++) {
            writer.add(bucketNumbers[i], counts[i]);
        }
        keep(tag, new Encoded(intervalStartMs, intervalEndMs, maxValue, writer.bytes()));
    }

    private void keep(String tag, Encoded encoded) {
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
