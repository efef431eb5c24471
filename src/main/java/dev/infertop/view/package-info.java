/**
 * The panels of the live view and batch text: everything drawn from a
 * {@link dev.infertop.model.Snapshot}, never from an aggregator.
 * <p>
 * May import: {@code ffi}, {@code model}. No aggregator ({@code agg}): views read snapshots only; {@code ffi} only
 * to tell a closed standard output.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.view;
