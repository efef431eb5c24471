/**
 * What a snapshot looks back on, written by agg and read by export: the flight recorder's last seconds of slices
 * (each layer's slice format) and every tick's interval histograms as buckets.
 * <p>
 * May import: {@code event}, {@code model}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.history;
