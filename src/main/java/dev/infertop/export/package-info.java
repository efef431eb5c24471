/**
 * A snapshot's files: summary.json, the HdrHistogram log, the Chrome trace, the HTML report and the operator DAG
 * (DOT and folded SVG), written from the content a snapshot copied ({@link dev.infertop.export.SnapshotContent}),
 * never from an aggregator.
 * <p>
 * May import: {@code history}, {@code io}, {@code json}, {@code model}. {@code json} only for the JSON a line and
 * summary.json share.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.export;
