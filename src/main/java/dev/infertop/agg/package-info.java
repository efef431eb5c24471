/**
 * The collector loop and the aggregators: the one reader thread drains the ring buffer
 * ({@link dev.infertop.agg.Collector}), {@link dev.infertop.agg.TraceAggregator} turns decoded records into
 * counts, recorders and per-layer figures, and every tick freezes them into a {@link dev.infertop.model.Snapshot}.
 * Single writer: only the collector thread touches an aggregator.
 * <p>
 * May import: {@code agg.graph}, {@code bpf}, {@code event}, {@code history}, {@code model},
 * {@code process.layout}, {@code view}. {@code bpf} only for the record source the collector drains and the
 * graphs in flight at a tick, {@code view} only for the {@code SnapshotView} interface it hands each snapshot to;
 * no view or exporter reads an aggregator back (snapshot's taker copies what it needs at a tick).
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.agg;
