package dev.infertop.metrics;

import dev.infertop.model.TargetInfo;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenTotals;
import dev.infertop.view.Fixtures;
import dev.infertop.view.SnapshotView;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MetricsFeedTest {
    private static Snapshot withDecodeTokens(long tokens, int pid) {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        TokenTotals total = new TokenTotals(tokens, 0, tokens, 0, 0, tokens, 0, 0, 1);
        return new Snapshot(s.sequence(), RunState.RUNNING,
                new TargetInfo(pid, "llama-server", null, List.of()), s.interval(),
                s.total().withTokens(total), 0, s.layers(), s.moe());
    }

    @Test
    void publishesEachTickBeforeTheViewAndPassesTheSnapshotOn() {
        List<String> order = new ArrayList<>();
        AtomicReference<MetricsFrame> published = new AtomicReference<>();
        SnapshotView view = snapshot -> order.add("view " + snapshot.total().tokens().tokensDecode());
        Histogram tpot = new Histogram(3);
        MetricsFeed feed = new MetricsFeed(view, frame -> {
            order.add("frame " + frame.snapshot().total().tokens().tokensDecode());
            published.set(frame);
        }, reader -> reader.accept("tpot", tpot), 1000, text -> { });
        tpot.recordValue(14_000_000);
        feed.show(withDecodeTokens(5, 1));
        assertEquals(List.of("frame 5", "view 5"), order);
        assertEquals(1, published.get().latencies().get("tpot").count());
        assertEquals(1000, published.get().attachedEpochMs());
    }

    /** --follow: the next target's feed starts new series; Prometheus sees the counter drop (a reset). */
    @Test
    void aNewTargetResetsTheCountersAndChangesTargetInfo() throws Exception {
        AtomicReference<MetricsFrame> published = new AtomicReference<>();
        new MetricsFeed(s -> { }, published::set, reader -> { }, 1_000_000, text -> { }).show(withDecodeTokens(5000, 100));
        String first = MetricsMappingTest.openMetrics(published.get());
        new MetricsFeed(s -> { }, published::set, reader -> { }, 2_000_000, text -> { }).show(withDecodeTokens(12, 200));
        String second = MetricsMappingTest.openMetrics(published.get());
        assertTrue(first.contains("infertop_decode_tokens_total 5000.0\ninfertop_decode_tokens_created 1000.000"), first);
        assertTrue(second.contains("infertop_decode_tokens_total 12.0\ninfertop_decode_tokens_created 2000.000"), second);
        assertTrue(first.contains("pid=\"100\""), first);
        assertTrue(second.contains("pid=\"200\"") && !second.contains("pid=\"100\""), second);
    }

    @Test
    void aHistogramWhoseCountDidNotChangeKeepsItsBuckets() {
        Histogram op = new Histogram(2);
        op.recordValue(50_000);
        AtomicReference<MetricsFrame> published = new AtomicReference<>();
        AtomicInteger reads = new AtomicInteger();
        MetricsFeed feed = new MetricsFeed(s -> { }, published::set, reader -> {
            reads.incrementAndGet();
            reader.accept("op:MUL_MAT", op);
        }, 0, text -> { });
        feed.show(withDecodeTokens(1, 1));
        LatencyBuckets first = published.get().latencies().get("op:MUL_MAT");
        feed.show(withDecodeTokens(1, 1));
        assertSame(first, published.get().latencies().get("op:MUL_MAT"));
        op.recordValue(50_000);
        feed.show(withDecodeTokens(1, 1));
        assertEquals(2, published.get().latencies().get("op:MUL_MAT").count());
        assertEquals(3, reads.get());
    }

    @Test
    void aFailureToBuildAFrameIsSaidOnceAndTheViewStillGetsEverySnapshot() {
        List<String> notices = new ArrayList<>();
        AtomicInteger shown = new AtomicInteger();
        MetricsFeed feed = new MetricsFeed(s -> shown.incrementAndGet(), frame -> { }, reader -> {
            throw new IllegalStateException("broken");
        }, 0, notices::add);
        feed.show(withDecodeTokens(1, 1));
        feed.show(withDecodeTokens(2, 1));
        assertEquals(2, shown.get());
        assertEquals(List.of("infertop: metrics not updated: java.lang.IllegalStateException: broken"), notices);
    }

    @Test
    void theBuildIsLibllamasNotAHelperLibrarys() {
        assertEquals(java.nio.file.Path.of("/b/libllama.so.0.5.0"), MetricsFeed.buildLibrary(List.of(
                "/b/libllama-common.so.0", "/b/libggml-base.so.0", "/b/libllama.so.0.5.0")));
        assertEquals(java.nio.file.Path.of("/b/libggml-base.so"), MetricsFeed.buildLibrary(List.of(
                "/b/libggml-cpu.so", "/b/libggml-base.so")));
        assertEquals(null, MetricsFeed.buildLibrary(List.of("/b/llama-bench")));
    }
}
