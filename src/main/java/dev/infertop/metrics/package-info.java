/**
 * {@code --listen}: the per-tick hand-off from the collector ({@link dev.infertop.metrics.MetricsFeed}), the
 * Prometheus mapping of a snapshot, histogram buckets, the HTTP endpoint with its deadlines and connection cap,
 * and {@code --web-config}.
 * <p>
 * May import: {@code model}, {@code process}, {@code view}. {@code view} only for the {@code SnapshotView}
 * interface; {@code process} only to identify the target's build.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.metrics;
