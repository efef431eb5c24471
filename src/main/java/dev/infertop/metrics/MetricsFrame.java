package dev.infertop.metrics;

import dev.infertop.model.Snapshot;

import java.util.Map;

/**
 * What a scrape reads: one tick's frozen snapshot and the run's latency buckets, copied on the collector
 * thread. Immutable; the exporter keeps only the latest.
 *
 * @param snapshot        the tick's snapshot (its {@code total*} fields are the run's cumulative counters)
 * @param attachedEpochMs when infertop attached to this target: the counters' and histograms' start
 *                        (OpenMetrics {@code _created}); a new target starts new series
 * @param llamaCppBuild   the GNU build-id of the target's libllama (else libggml-base, libggml), or ""
 * @param latencies       run histograms by tag: {@code ttft}, {@code tpot}, {@code op:NAME}
 */
public record MetricsFrame(Snapshot snapshot, long attachedEpochMs, String llamaCppBuild,
                           Map<String, LatencyBuckets> latencies) {
    public MetricsFrame {
        latencies = Map.copyOf(latencies);
    }
}
