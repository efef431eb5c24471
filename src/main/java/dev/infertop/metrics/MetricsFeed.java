package dev.infertop.metrics;

import dev.infertop.model.HistogramTag;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.process.ElfFile;
import dev.infertop.process.TargetException;
import dev.infertop.view.SnapshotView;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Sits between the collector and the view, one per traced target, like the snapshot taker: on the collector
 * thread, after each tick, it counts the run's latency histograms into the exported buckets and hands the
 * frozen snapshot with them to the exporter, then passes the snapshot on. Nothing here is read by the
 * collector, and a scrape never reaches this far: it reads the exporter's last frame.
 *
 * <p>A histogram whose count did not change since the last tick keeps its buckets (an op that stopped
 * running costs nothing); the build-id is read once per library file.
 */
public final class MetricsFeed implements SnapshotView {
    private final SnapshotView delegate;
    private final Consumer<MetricsFrame> exporter;
    private final Consumer<BiConsumer<String, Histogram>> runHistograms;
    private final long attachedEpochMs;
    private final Consumer<String> notices;
    private boolean failed;
    private final Map<String, LatencyBuckets> buckets = new HashMap<>();
    private List<String> libraries = List.of();
    private String build = "";

    /**
     * @param runHistograms hands the run's histograms by tag (ns values) to a reader, on the collector thread
     *                      (the aggregator's {@code forEachRunHistogram})
     * @param notices       where a failure to build a frame is said (once): the view and tracing go on
     */
    public MetricsFeed(SnapshotView delegate, Consumer<MetricsFrame> exporter,
                       Consumer<BiConsumer<String, Histogram>> runHistograms, long attachedEpochMs,
                       Consumer<String> notices) {
        this.notices = notices;
        this.delegate = delegate;
        this.exporter = exporter;
        this.runHistograms = runHistograms;
        this.attachedEpochMs = attachedEpochMs;
    }

    @Override
    public void show(Snapshot snapshot) {
        try {
            exporter.accept(capture(snapshot));
        } catch (RuntimeException e) {
            // Optional never sinks required: the metrics keep their last frame, the view and tracing go on.
            if (!failed) {
                failed = true;
                notices.accept("infertop: metrics not updated: " + e);
            }
        }
        delegate.show(snapshot);
    }

    @Override
    public boolean outputClosed() {
        return delegate.outputClosed();
    }

    @Override
    public void close() {
        delegate.close();
    }

    MetricsFrame capture(Snapshot snapshot) {
        Map<String, LatencyBuckets> latencies = new LinkedHashMap<>();
        runHistograms.accept((tag, histogram) -> {
            LatencyBuckets known = buckets.get(tag);
            if (known == null || known.count() != histogram.getTotalCount()) {
                known = LatencyBuckets.of(histogram, edgesFor(tag));
                buckets.put(tag, known);
            }
            latencies.put(tag, known);
        });
        return new MetricsFrame(snapshot, attachedEpochMs, build(snapshot.target()), latencies);
    }

    static long[] edgesFor(String tag) {
        return switch (tag) {
            case HistogramTag.TTFT -> LatencyBuckets.TTFT_EDGES_NS;
            case HistogramTag.TPOT -> LatencyBuckets.TPOT_EDGES_NS;
            default -> LatencyBuckets.OP_EDGES_NS;
        };
    }

    /** The build-id of the library that names the llama.cpp build, read again only when the libraries change. */
    private String build(TargetInfo target) {
        if (target == null || target.libraries().equals(libraries)) {
            return build;
        }
        libraries = target.libraries();
        Path library = buildLibrary(libraries);
        build = "";
        if (library != null) {
            try (ElfFile elf = ElfFile.openHeaders(library)) {
                build = elf.buildId().orElse("");
            } catch (TargetException | RuntimeException e) {
                build = ""; // gone or unreadable: the label stays empty
            }
        }
        return build;
    }

    /** libllama (not libllama-common and the like), else libggml-base, else libggml: built with llama.cpp. */
    static Path buildLibrary(List<String> libraries) {
        for (String prefix : List.of("libllama.", "libggml-base.", "libggml.")) {
            for (String library : libraries) {
                Path path = Path.of(library);
                if (path.getFileName() != null && path.getFileName().toString().startsWith(prefix)) {
                    return path;
                }
            }
        }
        return null;
    }
}
