/**
 * Immutable snapshot records with units in their names: a {@link dev.infertop.model.Snapshot} is who and where
 * plus the same {@link dev.infertop.model.Figures} twice, the interval's and the run's; derived metrics as
 * methods; the overhead estimate every output shows ({@link dev.infertop.model.OverheadEstimate}); the one text
 * sanitiser; config lines parsed (not read).
 * <p>
 * May import: no other infertop package. The bottom of the graph with {@code ffi}: it imports no other infertop
 * package, and does no I/O.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.model;
