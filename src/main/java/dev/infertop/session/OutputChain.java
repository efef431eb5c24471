package dev.infertop.session;

import dev.infertop.ffi.OwnPriority;
import dev.infertop.json.JsonLinesView;
import dev.infertop.metrics.MetricsFeed;
import dev.infertop.metrics.MetricsServer;
import dev.infertop.snapshot.SnapshotTaker;
import dev.infertop.view.BatchTextView;
import dev.infertop.view.SnapshotView;

import java.io.IOException;

/**
 * Where each tick's snapshot goes, built in one place, in the order a snapshot passes: the output the options ask
 * for (JSON Lines, text, the live screen, nothing), its first showing marked (the start is over, infertop yields
 * its boost), the snapshot writer, then the Prometheus feed when {@code --listen} serves one.
 */
record OutputChain(SnapshotView head, SnapshotTaker snapshots) {

    static OutputChain build(RunControl control, Pipeline pipeline, MetricsServer metrics) throws IOException {
        TraceOptions options = control.options;
        SnapshotView shown = switch (options.output()) {
            case JSON -> new JsonLinesView(control.out);
            case BATCH -> new BatchTextView(control.out);
            case LIVE -> LiveScreen.of(control).view;
            case QUIET -> (SnapshotView) snapshot -> { };
        };
        SnapshotView view = StartTimeline.markingFirstInterval(
                SnapshotView.afterFirstShown(shown, OwnPriority::firstScreenShown), control.err);
        SnapshotTaker taker = new SnapshotTaker(view, pipeline.aggregator(), pipeline.names(), options.snapshot(),
                control::notice, control.snapshotNumbers, control.version);
        view = taker;
        if (metrics != null) {
            // Each tick's snapshot and the run's histogram buckets, copied here, are what scrapes read.
            view = new MetricsFeed(view, metrics, pipeline.aggregator()::forEachRunHistogram,
                    System.currentTimeMillis(), control::notice);
        }
        return new OutputChain(view, taker);
    }
}
