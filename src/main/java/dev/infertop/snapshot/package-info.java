/**
 * Taking snapshots ({@link dev.infertop.snapshot.SnapshotTaker}: copied on the collector thread at a tick, written
 * on a thread of its own) and reading them back for {@code report} and {@code replay}.
 * <p>
 * May import: {@code agg}, {@code event}, {@code export}, {@code ffi}, {@code history}, {@code io}, {@code json},
 * {@code model}, {@code view}. {@code agg} only at the tick, on the collector thread, to copy what a snapshot needs.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.snapshot;
