package dev.infertop.export;

import dev.infertop.history.IntervalHistograms.Encoded;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * An HdrHistogram interval log (latency.hlog): one tag per histogram kind (ttft, tpot, op:MUL_MAT, …), values
 * in nanoseconds, the intervals of all tags in time order. HdrHistogram's own HistogramLogReader and
 * HistogramLogProcessor read it; added up per tag it gives the run's totals (summary.json's percentiles).
 * The header comes from HistogramLogWriter; interval lines are written in its format
 * ({@code Tag=T,start_s,length_s,max_ms,base64}) from the encodings already kept, not encoded again.
 */
public final class HlogWriter {
    /** HistogramLogWriter's default: Interval_Max in ms for values in ns. */
    static final double MAX_VALUE_UNIT_RATIO = 1_000_000.0;

    private HlogWriter() {}

    public static void write(OutputStream out, Map<String, List<Encoded>> histograms, long baseEpochMs) {
        PrintStream print = new PrintStream(out, false, StandardCharsets.US_ASCII);
        HistogramLogWriter writer = new HistogramLogWriter(print);
        writer.outputComment("infertop latency log: values in nanoseconds; tags ttft, tpot, op:<op type>");
        writer.outputLogFormatVersion();
        writer.outputStartTime(baseEpochMs);
        writer.outputBaseTime(baseEpochMs);
        writer.outputLegend();
        record Line(String tag, Encoded interval) {}
        List<Line> lines = new ArrayList<>();
        histograms.forEach((tag, intervals) -> intervals.forEach(interval -> lines.add(new Line(tag, interval))));
        lines.sort(Comparator.comparingLong(line -> line.interval().startMs()));
        Base64.Encoder base64 = Base64.getEncoder();
        for (Line line : lines) {
            Encoded interval = line.interval();
            print.print(String.format(Locale.US, "Tag=%s,%.3f,%.3f,%.3f,%s\n", line.tag(),
                    (interval.startMs() - baseEpochMs) / 1000.0, (interval.endMs() - interval.startMs()) / 1000.0,
                    interval.maxValue() / MAX_VALUE_UNIT_RATIO, base64.encodeToString(compressed(interval))));
        }
        print.flush();
    }

    /** The form an HdrHistogram log line holds (deflated), made here: kept intervals stay as their buckets. */
    static byte[] compressed(Encoded interval) {
        Histogram histogram = interval.decode();
        ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        int length = histogram.encodeIntoCompressedByteBuffer(buffer);
        return Arrays.copyOf(buffer.array(), length);
    }

    /** The earliest interval start among {@code histograms}, or {@code fallback} when there is none. */
    public static long firstStartMs(Map<String, List<Encoded>> histograms, long fallback) {
        long first = Long.MAX_VALUE;
        for (List<Encoded> list : histograms.values()) {
            for (Encoded interval : list) {
                first = Math.min(first, interval.startMs());
            }
        }
        return first == Long.MAX_VALUE ? fallback : first;
    }
}
