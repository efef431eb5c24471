package dev.infertop.metrics;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LabelValuesTest {
    @Test
    void controlCharactersAreShownAsHexEscapes() {
        assertEquals("llama\\x0aserver\\x1b[2J\\x7f\\x85", LabelValues.sanitize("llama\nserver\u001b[2J\u007f\u0085"));
    }

    @Test
    void aValueMadeVisibleWhereItEnteredIsLabelledAsItIs() {
        // Target names are sanitised where they enter (SafeText): a second pass must not double the escapes.
        assertEquals("llama\\x1b]0;x\\x07", LabelValues.sanitize("llama\\x1b]0;x\\x07"));
        assertEquals("a\\x0ab", LabelValues.sanitize("a\\x0ab"));
    }

    @Test
    void aBackslashIsKeptAsInEveryOtherOutput() {
        // Not \x5c: the exposition format escapes it itself (MetricsMappingTest), and Prometheus stores one.
        assertEquals("C:\\models\\llama.gguf", LabelValues.sanitize("C:\\models\\llama.gguf"));
        assertEquals(1, LabelValues.sanitize("a\\b").chars().filter(c -> c == '\\').count());
    }

    @Test
    void invisibleFormatCharactersAreShownToo() {
        // A right-to-left override would make "fdp.exe" read as "exe.pdf" on a dashboard.
        assertEquals("model-\\u202efdp.gguf\\u2028", LabelValues.sanitize("model-\u202efdp.gguf\u2028"));
    }

    @Test
    void ordinaryTextIncludingNonAsciiIsKept() {
        assertEquals("/models/llama-3 ünïcode 模型.gguf", LabelValues.sanitize("/models/llama-3 ünïcode 模型.gguf"));
        assertEquals("RMS_NORM+MUL", LabelValues.sanitize("RMS_NORM+MUL"));
        assertEquals("", LabelValues.sanitize(null));
    }

    @Test
    void longValuesKeepTheirStartAndEnd() {
        String path = "/very/long/" + "directory/".repeat(50) + "bench.gguf";
        String label = LabelValues.sanitize(path);
        assertEquals(LabelValues.MAX_CHARS, label.length());
        assertTrue(label.startsWith("/very/long/directory/"), label);
        assertTrue(label.endsWith("directory/bench.gguf"), label);
        assertTrue(label.contains("..."), label);
        assertEquals("x".repeat(128), LabelValues.sanitize("x".repeat(128)));
    }

    @Test
    void aLongValueFullOfControlCharactersStaysBounded() {
        String label = LabelValues.sanitize("\u0001".repeat(10_000));
        assertTrue(label.length() <= 4 * LabelValues.MAX_CHARS, label.length() + " chars");
    }
}
