package dev.infertop.export;

import dev.infertop.history.IntervalHistograms;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The interval log read back with HdrHistogram's own reader: tags, times and counts as written. */
class HlogWriterTest {
    private static IntervalHistograms.Encoded interval(long startMs, long... values) {
        Histogram histogram = new Histogram(3);
        for (long value : values) {
            histogram.recordValue(value);
        }
        histogram.setStartTimeStamp(startMs);
        histogram.setEndTimeStamp(startMs + 1000);
        return IntervalHistograms.Encoded.of(histogram);
    }

    @Test
    void readsBackPerTagInTimeOrder() throws Exception {
        Map<String, List<IntervalHistograms.Encoded>> histograms = new java.util.LinkedHashMap<>();
        histograms.put("tpot", List.of(interval(10_000, 1_000_000, 2_000_000), interval(11_000, 3_000_000)));
        histograms.put("op:MUL_MAT", List.of(interval(10_500, 50_000)));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        HlogWriter.write(out, histograms, HlogWriter.firstStartMs(histograms, 0));
        String text = out.toString();
        List<String> lines = List.of(text.split("\n"));
        assertEquals("#infertop latency log: values in nanoseconds; tags ttft, tpot, op:<op type>", lines.get(0));
        assertEquals("#[Histogram log format version 1.3]", lines.get(1));
        assertEquals("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
                lines.get(4));
        // Interval_Max is in ms (HdrHistogram divides by 1e6), at the histogram's precision: 2 ms → 2.001
        assertEquals(true, lines.get(5).startsWith("Tag=tpot,0.000,1.000,2.001,HIST"), lines.get(5));
        assertEquals(true, lines.get(6).startsWith("Tag=op:MUL_MAT,0.500,1.000,0.050,HIST"), lines.get(6));
        assertEquals(true, lines.get(7).matches("Tag=tpot,1\\.000,1\\.000,3\\.00\\d,HIST.*"), lines.get(7));

        HistogramLogReader reader = new HistogramLogReader(new ByteArrayInputStream(out.toByteArray()));
        Map<String, Histogram> totals = new HashMap<>();
        List<String> tags = new ArrayList<>();
        EncodableHistogram next;
        while ((next = reader.nextIntervalHistogram()) != null) {
            Histogram histogram = (Histogram) next;
            tags.add(histogram.getTag());
            totals.merge(histogram.getTag(), histogram, (a, b) -> {
                a.add(b);
                return a;
            });
        }
        assertEquals(List.of("tpot", "op:MUL_MAT", "tpot"), tags);
        assertEquals(3, totals.get("tpot").getTotalCount());
        assertEquals(2_000_000, totals.get("tpot").getValueAtPercentile(50), 2_000_000 * 1e-3);
        assertEquals(50_000, totals.get("op:MUL_MAT").getMaxValue(), 50);
    }
}
