package dev.infertop.metrics;

import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.HostileText;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.view.Fixtures;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Label;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every label value the metrics mapping makes of a target-chosen string (command, model file, build-id, backend
 * and op names), for many generated hostile strings ({@link HostileText}): none holds a control or invisible
 * character, each is bounded, and neither exposition format writes one raw (only its own line feeds).
 */
class HostileLabelsPropertyTest {
    /** Longest escape ({@code \\u{10ffff}}) for each kept code point, and the "..." of a cut value. */
    private static final int MAX_LABEL_CHARS = LabelValues.MAX_CHARS * 10 + 3;

    @Test
    void aSanitisedValueHoldsNothingForbiddenAndIsBounded() {
        Random random = new Random(0x1abe15L);
        for (int i = 0; i < 20_000; i++) {
            String hostile = HostileText.next(random, i % 10 == 0 ? 600 : 64);
            String label = LabelValues.sanitize(hostile);
            assertNull(HostileText.firstForbidden(label, ""), label);
            assertTrue(label.length() <= MAX_LABEL_CHARS, () -> label.length() + " chars");
            assertTrue(label.codePointCount(0, label.length()) <= hostile.codePointCount(0, hostile.length()) * 10 + 3);
        }
        assertEquals("", LabelValues.sanitize(null));
    }

    @Test
    void everyLabelOfAHostileSnapshotAndBothExpositionsAreClean() throws IOException {
        Random random = new Random(0xe7905ed);
        for (int i = 0; i < 500; i++) {
            String command = HostileText.next(random, 40);
            String model = HostileText.next(random, i % 5 == 0 ? 400 : 40);
            String build = HostileText.next(random, 20);
            List<String> ops = List.of(HostileText.next(random, 20), HostileText.next(random, 20),
                    HostileText.next(random, 200));
            List<String> backends = List.of(HostileText.next(random, 20), HostileText.next(random, 20));
            MetricsFrame frame = frame(command, model, build, ops, backends);

            MetricSnapshots metrics = MetricsMapping.snapshots(frame);
            Set<String> names = new HashSet<>();
            for (MetricSnapshot metric : metrics) {
                for (DataPointSnapshot point : metric.getDataPoints()) {
                    for (Label label : point.getLabels()) {
                        names.add(label.getName());
                        String value = label.getValue();
                        assertNull(HostileText.firstForbidden(value, ""), () -> label.getName() + " of "
                                + metric.getMetadata().getName());
                        assertTrue(value.length() <= MAX_LABEL_CHARS, label.getName());
                    }
                }
            }
            assertTrue(names.containsAll(List.of("command", "model", "llama_cpp_build", "backend", "op")), names::toString);
            for (MetricsServer.Format format : MetricsServer.Format.values()) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                format.writer.write(out, metrics);
                String exposition = out.toString(StandardCharsets.UTF_8);
                assertNull(HostileText.firstForbidden(exposition, "\n"), format.name());
            }
        }
    }

    /** The fixture's snapshot with hostile names wherever the target chooses one, and run histograms per op. */
    private static MetricsFrame frame(String command, String model, String build, List<String> ops,
                                      List<String> backends) {
        List<OpTotals> opRows = ops.stream().map(op -> new OpTotals(op, 10, 10, 1_000_000, 900_000, 100_000,
                new LatencySummary(10, 0.1, 0.1, 0.1, 0.1, 0.1), HostileText.class.getSimpleName())).toList();
        Snapshot snapshot = Fixtures.snapshot(LayerStatus.State.ON, new TargetInfo(4242, command, model, List.of()),
                opRows).withFigures(f -> f.withBackends(
                        backends.stream().map(b -> new BackendTotals(b, 7, 70, 1_000_000)).toList(),
                        backends.stream().map(b -> new BackendOps(b, 7, 1_000_000,
                                List.of(new BackendOps.Op(ops.getFirst(), 70, 1_000_000, true)))).toList()));
        Histogram histogram = new Histogram(2);
        histogram.recordValue(120_000);
        Map<String, LatencyBuckets> latencies = new LinkedHashMap<>();
        latencies.put("ttft", LatencyBuckets.of(histogram, LatencyBuckets.TTFT_EDGES_NS));
        latencies.put("tpot", LatencyBuckets.of(histogram, LatencyBuckets.TPOT_EDGES_NS));
        for (String op : ops) {
            latencies.put("op:" + op, LatencyBuckets.of(histogram, LatencyBuckets.OP_EDGES_NS));
        }
        return new MetricsFrame(snapshot, 1_700_000_000_000L, build, latencies);
    }
}
