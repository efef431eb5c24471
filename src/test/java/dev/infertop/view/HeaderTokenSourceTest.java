package dev.infertop.view;

import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.GraphTokenCounts;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenSource;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The live view's header says where the token figures come from: a program whose llama_decode is inlined or never
 * called (an LTO-built addon, an engine driving ggml's scheduler) reads its tokens from the graphs, and the header
 * says so in full before the rates, so that they are not taken for an idle engine's; the API's source is a detail
 * at the end of the latency row.
 */
class HeaderTokenSourceTest {
    /** The latency row of the header (after the layers line and the three speed rows). */
    private static final int LATENCY_ROW = 4;

    private static String latencyRow(TokenSource source) {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        Snapshot sourced = s.withFigures(f -> f.withTokens(f.tokens().withSource(source, GraphTokenCounts.EMPTY)));
        DefaultVirtualTerminal terminal = Fixtures.drawn(sourced, new UiState(), 200, 30);
        return Fixtures.row(terminal, LATENCY_ROW);
    }

    @Test
    void tokensFromTheGraphsAreSaidInFullFirst() {
        String row = latencyRow(TokenSource.GRAPHS);
        assertTrue(row.startsWith("llama_decode is not called: inlined or not used; tokens from the graphs  "), row);
        assertFalse(row.contains("tokens: api"), row);
    }

    @Test
    void theApisTokensAreADetailAtTheEnd() {
        String row = latencyRow(TokenSource.API);
        assertTrue(row.stripTrailing().endsWith("tokens: api"), row);
        assertFalse(row.contains("from the graphs"), row);
    }

    @Test
    void noTokensAtAllIsSaidRatherThanZeroRates() {
        String row = latencyRow(TokenSource.NONE);
        assertTrue(row.startsWith("no tokens seen: no llama.cpp API call, no graph with a known token embedding"), row);
    }
}
