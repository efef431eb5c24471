package dev.infertop.export;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * An HdrHistogram interval log (latency.hlog): one tag per histogram kind (ttft, tpot, op:MUL_MAT, …), values
 * in nanoseconds, the intervals of all tags in time order. HdrHistogram's own HistogramLogReader and
 * HistogramLogProcessor read it; added up per tag it gives the run's totals (summary.json's percentiles).
 */
public final class HlogWriter {
    private HlogWriter() {}

    public static void write(OutputStream out, Map<String, List<Histogram>> histograms, long baseEpochMs) {
        PrintStream print = new PrintStream(out, false, StandardCharsets.US_ASCII);
        HistogramLogWriter writer = new HistogramLogWriter(print);
        writer.outputComment("infertop latency log: values in nanoseconds; tags ttft, tpot, op:<op type>");
        writer.outputLogFormatVersion();
        writer.setBaseTime(baseEpochMs);
        writer.outputStartTime(baseEpochMs);
        writer.outputBaseTime(baseEpochMs);
        writer.outputLegend();
        List<Histogram> all = new ArrayList<>();
        for (Map.Entry<String, List<Histogram>> entry : histograms.entrySet()) {
            for (Histogram histogram : entry.getValue()) {
                Histogram tagged = histogram.copy();
                tagged.setStartTimeStamp(histogram.getStartTimeStamp());
                tagged.setEndTimeStamp(histogram.getEndTimeStamp());
                tagged.setTag(entry.getKey());
                all.add(tagged);
            }
        }
        all.sort(Comparator.comparingLong(Histogram::getStartTimeStamp));
        for (Histogram histogram : all) {
            writer.outputIntervalHistogram(histogram);
        }
        print.flush();
    }

    /** The earliest interval start among {@code histograms}, or {@code fallback} when there is none. */
    public static long firstStartMs(Map<String, List<Histogram>> histograms, long fallback) {
        long first = Long.MAX_VALUE;
        for (List<Histogram> list : histograms.values()) {
            for (Histogram histogram : list) {
                first = Math.min(first, histogram.getStartTimeStamp());
            }
        }
        return first == Long.MAX_VALUE ? fallback : first;
    }
}
