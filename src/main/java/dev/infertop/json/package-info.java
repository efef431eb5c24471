/**
 * The JSON codec: the JSON Lines a run writes ({@code --json}), the per-layer objects in them, and the safe
 * writer every JSON file of infertop goes through (names from the target escaped, never trusted). The
 * readers of these lines (replay, diff, snapshot) use the same keys ({@link dev.infertop.model.JsonSchema}).
 * <p>
 * May import: {@code ffi}, {@code model}, {@code view}. {@code view} only for the {@code SnapshotView}
 * interface it implements; {@code ffi} only to tell a closed standard output.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.json;
