package dev.infertop.export;

import dev.infertop.model.DecodeSteps;
import dev.infertop.model.Roofline;
import dev.infertop.model.RooflineTotals;
import dev.infertop.snapshot.SnapshotFixtures;
import dev.infertop.view.RooflinePanelTest;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * report.html's roofline: points where their numbers put them on log-log axes, the two ceilings and the ridge
 * where the machine's figures put them, the numbers in a table, and target text escaped.
 */
class RooflineSectionTest {
    private static SnapshotContent content(RooflineTotals roofline) {
        SnapshotContent c = SnapshotFixtures.content();
        return new SnapshotContent(RooflinePanelTest.with(c.last(), roofline), c.window(), c.tensorNames(),
                c.histograms(), c.ticks(), c.trigger(), c.createdEpochMs(), c.infertopVersion(), c.threadNames(),
                c.dag());
    }

    private static String attribute(String element, String name) {
        Matcher m = Pattern.compile(" " + name + "=\"([^\"]*)\"").matcher(element);
        assertTrue(m.find(), name + " in " + element);
        return m.group(1);
    }

    private static String element(String svg, String start) {
        int at = svg.indexOf(start);
        assertTrue(at >= 0, start + " in " + svg);
        return svg.substring(at, svg.indexOf('>', at) + 1);
    }

    /** The circle whose title names {@code op}. */
    private static String point(String svg, String op) {
        Matcher m = Pattern.compile("<circle class=\"op\"[^>]*><title>" + Pattern.quote(op) + ":").matcher(svg);
        assertTrue(m.find(), op + " point in " + svg);
        return m.group();
    }

    @Test
    void pointsCeilingsAndRidgeArePlacedWhereTheNumbersSay() {
        String html = RooflineSection.roofline(content(RooflinePanelTest.totals(RooflinePanelTest.CEILINGS)));
        // x holds 0.167 .. 30 FLOP/byte and the ridge (5): decades 0.1 .. 100 over the plot's 480 px from x = 60;
        // y holds 2 .. 150 GFLOP/s and the compute ceiling (200): decades 1 .. 1000 over 256 px up from y = 266.
        // MUL_MAT: 1 FLOP/byte (one decade in: 60 + 160), 30 GFLOP/s (266 - 256 x log10(30) / 3 = 140.0)
        String matmul = point(html, "MUL_MAT");
        assertEquals("220.0", attribute(matmul, "cx"));
        assertEquals("140.0", attribute(matmul, "cy"));
        // FLASH_ATTN_EXT: 30 FLOP/byte (60 + 160 x 2.477 = 456.3), 150 GFLOP/s (266 - 256 x 2.176 / 3 = 80.3)
        String attention = point(html, "FLASH_ATTN_EXT");
        assertEquals("456.3", attribute(attention, "cx"));
        assertEquals("80.3", attribute(attention, "cy"));
        assertEquals("#d62728", attribute(matmul, "fill"), "memory-bound");
        assertEquals("#2ca02c", attribute(attention, "fill"), "compute-bound");
        assertTrue(html.contains(">MUL_MAT</text>"), "labelled");

        // The memory roof enters at the left edge (0.1 FLOP/byte x 40 GB/s = 4 GFLOP/s: 266 - 256 x 0.602 / 3)
        // and meets the compute roof (200 GFLOP/s: 69.6) at the ridge (5 FLOP/byte: 60 + 160 x 1.699 = 331.8).
        String memory = element(html, "<line class=\"memory-ceiling\"");
        assertEquals(List.of("60.0", "214.6", "331.8", "69.6"), List.of(attribute(memory, "x1"),
                attribute(memory, "y1"), attribute(memory, "x2"), attribute(memory, "y2")));
        String compute = element(html, "<line class=\"compute-ceiling\"");
        assertEquals(List.of("331.8", "69.6", "540.0", "69.6"), List.of(attribute(compute, "x1"),
                attribute(compute, "y1"), attribute(compute, "x2"), attribute(compute, "y2")));
        String ridge = element(html, "<line class=\"ridge\"");
        assertEquals("331.8", attribute(ridge, "x1"));
        assertEquals("266", attribute(ridge, "y2"));
        assertTrue(html.contains(">ridge 5.00</text>"), html);

        // The numbers behind it, and the decode bound beside the measured rate (the fixture run's).
        assertTrue(html.contains("<tr><td>MUL_MAT</td><td>4000</td><td>30.00</td><td>30.00</td><td>1.000</td>"
                + "<td>75</td><td>15</td><td style=\"text-align:left\">memory-bound</td></tr>"), html);
        assertTrue(html.contains("memory ceiling 40.0 GB/s &middot; compute ceiling 200.0 GFLOP/s &middot; ridge "
                + "5.00 FLOP/byte"), html);
        assertTrue(html.contains("decode: 300.0 MB of weights per token, bound 133.3 tok/s by the memory ceiling; "
                + "measured "), html);
    }

    @Test
    void withoutCeilingsThePointsStandAloneAndThePageSaysHowToMeasure() {
        String html = RooflineSection.roofline(content(RooflinePanelTest.totals(null)));
        assertEquals(3, Pattern.compile("<circle class=\"op\"").matcher(html).results().count());
        assertFalse(html.contains("ceiling\""), "no roof without ceilings");
        assertTrue(html.contains("run <code>infertop machine --measure</code>"), html);
        assertTrue(html.contains("<tr><td>MUL_MAT</td><td>4000</td><td>30.00</td><td>30.00</td><td>1.000</td>"
                + "<td>-</td><td>-</td><td style=\"text-align:left\">-</td></tr>"), html);
    }

    @Test
    void opNamesFromTheTargetAreEscaped() {
        String name = "<script>alert(1)</script>\"&";
        RooflineTotals hostile = new RooflineTotals(List.of(new RooflineTotals.OpRoofline(name, 1, 1_000_000,
                0, 1_000_000, 1_000_000)), 0, 0, RooflinePanelTest.CEILINGS);
        String page = HtmlReportWriter.html(content(hostile));
        assertFalse(page.contains("<script"), "no markup from the target");
        assertTrue(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;"), page);
    }

    @Test
    void aRunWithNothingCostedHasNoPlot() {
        assertNull(RooflineSection.roofline(content(RooflineTotals.EMPTY)));
        // an op that moved bytes but did no FLOPs has no place on log axes: the table still has it
        String html = RooflineSection.roofline(content(new RooflineTotals(List.of(new RooflineTotals.OpRoofline("CPY",
                1, 1000, 0, 0, 1000)), 0, 0, new Roofline.Ceilings(1e9, 1e9))));
        assertFalse(html.contains("<svg"), html);
        assertTrue(html.contains("<td>CPY</td>"), html);
    }

    @Test
    void decadesAreWrittenOut() {
        assertEquals("0.01", RooflineSection.decadeLabel(-2));
        assertEquals("1", RooflineSection.decadeLabel(0));
        assertEquals("1000", RooflineSection.decadeLabel(3));
    }

    /** A server's steps of one and of four tokens, costed as the roofline aggregator keeps them. */
    private static RooflineTotals servingSteps(RooflineTotals base, Roofline.Ceilings ceilings) {
        // 1 token a step: 10 steps of 4 MB weights, 100 context positions of 1,000 B, 8 MFLOP, 1 ms.
        // 4 tokens a step: 5 steps of 4 MB weights, 400 positions, 32 MFLOP, 2 ms.
        List<DecodeSteps> steps = List.of(
                new DecodeSteps(4, 5, 20, 20_000_000, 2_000_000, 2_000, 160_000_000, 10_000_000),
                new DecodeSteps(1, 10, 10, 40_000_000, 1_000_000, 1_000, 80_000_000, 10_000_000));
        return new RooflineTotals(base.ops(), 0, 0, 0, 0, 0, ceilings, steps, 1_000);
    }

    @Test
    void aServersDecodeStepsAreTabledBySizeWithTheirBoundAndTheRidge() {
        RooflineTotals serving = servingSteps(RooflinePanelTest.totals(RooflinePanelTest.CEILINGS),
                RooflinePanelTest.CEILINGS);
        String html = RooflineSection.roofline(content(serving));
        assertTrue(html.contains("decode steps of several tokens (one per busy sequence) in the table below"), html);
        assertFalse(html.contains("no one-token decode graph read"), html);
        // Rows by size: per step 4 MB weights; per token (weights + KV) / tokens; bound = 40 GB/s over that.
        assertTrue(html.contains("<tr><td>1</td><td>10</td><td>4.000</td><td>0.100</td><td>100.0</td><td>4.100</td>"
                + "<td>1.951</td><td>1000.0</td><td>9756.1</td>"), html);
        assertTrue(html.contains("<tr><td>4</td><td>5</td><td>4.000</td><td>0.400</td><td>400.0</td><td>1.100</td>"
                + "<td>7.273</td><td>2000.0</td><td>36363.6</td>"), html);
        assertTrue(html.indexOf("<tr><td>1</td>") < html.indexOf("<tr><td>4</td>"), "smallest batch first");
        // Ridge 5 FLOP/byte: b x 8 MFLOP / (4 MB + b x 0.1 MB) = 5 at b = 20 / 7.5 = 2.67; KV 1,000 B a position
        // passes 4 MB of weights past 4,000 positions.
        assertTrue(html.contains("reaches the ridge (5.00 FLOP/byte) at about 2.7 busy sequences"), html);
        assertTrue(html.contains("KV reads pass the weights past 4000 context positions a step"), html);
    }

    @Test
    void withoutCeilingsTheStepsStayWithoutABound() {
        String table = RooflineSection.decodeSteps(servingSteps(RooflinePanelTest.totals(null), null));
        assertTrue(table.contains("<td>2000.0</td><td>-</td>"), table);
        assertFalse(table.contains("ridge"), table);
        assertEquals("", RooflineSection.decodeSteps(RooflinePanelTest.totals(RooflinePanelTest.CEILINGS)));
    }
}
