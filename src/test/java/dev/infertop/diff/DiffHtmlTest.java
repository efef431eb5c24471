package dev.infertop.diff;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The side-by-side page: one bar per op and run, scaled to one axis; names from a run escaped. */
class DiffHtmlTest {
    @Test
    void barsAreScaledToTheLargestTimeAndNamesAreEscaped() throws DiffInputException {
        RunRecord a = DiffFixtures.run("a", 100, 6, 0);
        RunRecord b = DiffFixtures.run("b", 80, 8, 0.003);
        ((ObjectNode) b.totals()).put("model", "<script>alert(1)</script>.gguf");
        String html = DiffHtml.html(DiffFixtures.diff(a, b));
        assertTrue(html.startsWith("<!DOCTYPE html>") && html.endsWith("</body></html>\n"));
        assertFalse(html.contains("<script>"), "a model name is text, not markup");
        assertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;.gguf"));
        // MUL_MAT in B (8 ms) is the longest bar: the full width, 560 − 130 − 110 = 320 px; A's 6 ms is 240 px
        Matcher bars = Pattern.compile("<rect class=\"bar\" x=\"130\" y=\"\\d+\" width=\"([0-9.]+)\"[^>]*><title>"
                + "([AB] [A-Z_]+):").matcher(html);
        StringBuilder seen = new StringBuilder();
        while (bars.find()) {
            seen.append(bars.group(2)).append('=').append(bars.group(1)).append(' ');
        }
        assertEquals("A MUL_MAT=240.0 B MUL_MAT=320.0 A ADD=40.0 B ADD=40.0 ", seen.toString());
        assertTrue(html.contains("<svg class=\"plot\""), "the interval plots");
    }
}
