package dev.infertop.export;

import dev.infertop.history.FlightRecorder;
import dev.infertop.model.LayerStatus;
import dev.infertop.view.Fixtures;
import dev.infertop.snapshot.SnapshotFixtures;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report page from the fixture run: its sections, plots and absent sections, self-contained. */
class HtmlReportWriterTest {
    private static int count(String text, String pattern) {
        Matcher matcher = Pattern.compile(pattern).matcher(text);
        int n = 0;
        while (matcher.find()) {
            n++;
        }
        return n;
    }

    @Test
    void everySectionIsAPlotOrSaysItWasNotRecorded() {
        String html = HtmlReportWriter.html(SnapshotFixtures.content());
        assertEquals(9, count(html, "<section>"));
        assertEquals(5, count(html, "<svg class=\"plot\""),
                "op time per token, token and op percentiles, threads, time vs FLOPs");
        // 3 op types in each op line plot, TTFT and TPOT in the token plot; the FLOPs plot has dots
        assertEquals(3 + 2 + 3, count(html, "<polyline"));
        assertEquals(4, count(html, "class=\"absent\""),
                "thread states, counters (layers not in the run), roofline (no costed node), experts");
        assertTrue(html.contains("<h2>Expert activations (heatmap)</h2>\n<p class=\"absent\">not recorded in this run"));
        assertTrue(html.stripTrailing().endsWith("</html>"));
        assertFalse(html.contains("<script"), "no script");
        assertEquals(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""), "no network");
    }

    @Test
    void threadBalanceBarsAreWorkAndWaitToScale() {
        String svg = HtmlReportWriter.threadBalance(SnapshotFixtures.content());
        // thread 7 per graph at scale s (1..4): work 100s + 10s + 70s = 180s, wait 20s → 1800 ns work,
        // 200 ns wait over the run; thread 8 has less in all (it starts 10 ns late), so thread 7's bar is the
        // tallest and fills the plot's 200 px: its work is 180 px.
        List<String> rects = Pattern.compile("<rect x=\"[^\"]+\" y=\"([^\"]+)\" width=\"[^\"]+\" height=\"([^\"]+)\" "
                + "fill=\"#1f77b4\"/>").matcher(svg).results().map(r -> r.group(2)).toList();
        // the tallest bar (work + wait) fills the plot (200 px): thread 7 has 1800 of 2000 ns as work
        assertEquals("180.0", rects.getFirst());
    }

    @Test
    void anEmptyRunDrawsNoPlot() {
        var content = SnapshotFixtures.content();
        var empty = new SnapshotContent(Fixtures.snapshot(
                LayerStatus.State.OFF),
                FlightRecorder.Window.empty(0, 1), content.tensorNames(),
                java.util.Map.of(), List.of(), "test", 0, "v", java.util.Map.of(), null);
        assertNull(HtmlReportWriter.opTimePerToken(empty));
        assertNull(HtmlReportWriter.threadBalance(empty));
        assertNull(HtmlReportWriter.tokenPercentiles(empty));
        assertNull(HtmlReportWriter.timeVsFlops(empty));
        String html = HtmlReportWriter.html(empty);
        assertEquals(9, count(html, "not recorded in this run"));
    }

    @Test
    void timeVsFlopsHasADotPerOpAndFlopsValue() {
        String svg = HtmlReportWriter.timeVsFlops(SnapshotFixtures.content());
        // MUL_MAT 2·8·8 = 128, RMS_NORM+MUL 8 + 8 = 16, ADD 8: one FLOPs value each, 4 graphs averaged per dot
        assertEquals(3, count(svg, "<circle"));
        assertTrue(svg.contains("log10 FLOPs per group (estimated): 0.903 .. 2.11"), svg); // log10 8, log10 128
        assertEquals(0, count(svg, "<polyline"));
    }

    @Test
    void textIsEscaped() {
        assertEquals("a&lt;b&gt; &amp; &quot;c&quot;", HtmlReportWriter.escape("a<b> & \"c\""));
    }
}
