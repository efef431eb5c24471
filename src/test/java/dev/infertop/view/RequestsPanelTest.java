package dev.infertop.view;

import dev.infertop.model.SpeculativeTotals;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.SequenceStatus;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenTotals;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static dev.infertop.view.Fixtures.find;
import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A 4-slot server's interval: the requests panel (key r) lists its sequences and the calls by batch size. */
class RequestsPanelTest {
    private DefaultVirtualTerminal terminal;
    private TerminalScreen screen;
    private final UiState ui = new UiState();

    static Snapshot serverSnapshot() {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        List<SequenceStatus> slots = List.of(
                new SequenceStatus(0x5000, 0, true, 120, 17, 1_057_000_000L, 54_300_000L, 20_000_000L),
                new SequenceStatus(0x5000, 1, true, 88, 17, 990_000_000L, 55_100_000L, 20_000_000L),
                new SequenceStatus(0x5000, 2, false, 64, 0, 0, 0, 400_000_000L),
                new SequenceStatus(0x5000, 3, true, 30, 31, 700_000_000L, 0, 3_000_000_000L));
        // 18 steps of 4 slots, 1 of 3, 1 prompt batch of 152 tokens (129-256).
        List<Long> sizes = List.of(0L, 0L, 19L, 0L, 0L, 0L, 0L, 0L, 1L, 0L, 0L, 0L);
        TokenTotals tokens = new TokenTotals(20, 1, 19, 0, 152, 75, 600_000_000L, 400_000_000L, 1, 4, 3, 0, sizes,
                slots);
        return withTokens(s, tokens, tokens);
    }

    /** {@code s} with other token figures (a server's), the rest as it is. */
    static Snapshot withTokens(Snapshot s, TokenTotals interval, TokenTotals total) {
        return new Snapshot(s.sequence(), s.state(), s.target(), s.interval().withTokens(interval),
                s.total().withTokens(total), s.lostEvents(), s.layers(), s.moe(), s.limits());
    }

    private void render(Snapshot snapshot) throws IOException {
        render(snapshot, 100);
    }

    private void render(Snapshot snapshot, int columns) throws IOException {
        terminal = new DefaultVirtualTerminal(new TerminalSize(columns, 30));
        screen = new TerminalScreen(terminal);
        screen.startScreen();
        new MonitorScreen(Theme.COLOUR, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "h help  q quit").draw(screen.newTextGraphics(), snapshot, ui);
        screen.refresh(Screen.RefreshType.DELTA);
    }

    @AfterEach
    void stop() throws IOException {
        if (screen != null) {
            screen.stopScreen();
        }
    }

    @Test
    void slotsAndBatchSizesReplaceTheOperatorTable() throws IOException {
        ui.body = BodyPanel.REQUESTS;
        render(serverSnapshot());
        int heading = find(terminal, "PHASE");
        assertTrue(heading >= 0, Fixtures.screen(terminal));
        assertEquals(" 0x5000            0 generating     120        17      1057     54.30     0.0",
                row(terminal, heading + 1).stripTrailing(), Fixtures.screen(terminal));
        assertTrue(row(terminal, heading + 3).contains("prompt"), row(terminal, heading + 3));
        assertTrue(row(terminal, heading + 3).contains("     -         -"), "no TTFT yet: " + row(terminal, heading + 3));
        int sizes = find(terminal, "llama_decode calls by tokens per call (20)");
        assertTrue(sizes > heading + 4, Fixtures.screen(terminal));
        assertTrue(row(terminal, sizes + 1).startsWith(" 3-4             19  ####"), row(terminal, sizes + 1));
        assertTrue(row(terminal, sizes + 2).startsWith(" 129-256          1  #"), row(terminal, sizes + 2));
        assertEquals(-1, find(terminal, "CALLS/s"), "the operator table is replaced");
    }

    @Test
    void aShorterFrameLeavesNoRowOfTheLongerOneBefore() throws IOException {
        ui.body = BodyPanel.REQUESTS;
        render(serverSnapshot());
        int sizes = find(terminal, "llama_decode calls by tokens per call");
        Snapshot s = serverSnapshot();
        TokenTotals quiet = new TokenTotals(1, 0, 1, 0, 0, 1, 0, 1_000_000L, 1, 0, 1, 0,
                List.of(1L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), s.interval().tokens().sequences().subList(0, 1));
        Snapshot shorter = withTokens(s, quiet, s.total().tokens());
        new MonitorScreen(Theme.COLOUR, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "h help  q quit").draw(screen.newTextGraphics(), shorter, ui);
        screen.refresh(Screen.RefreshType.DELTA);
        assertTrue(sizes > 0);
        assertEquals(-1, find(terminal, "129-256"), "a row of the frame before:\n" + Fixtures.screen(terminal));
        assertEquals(-1, find(terminal, " 3-4 "), Fixtures.screen(terminal));
        assertTrue(find(terminal, "tokens per call (1)") > 0, Fixtures.screen(terminal));
    }

    @Test
    void bucketsAreOneTwoThenPowersOfTwo() {
        assertEquals(0, TokenTotals.batchSizeBucket(1));
        assertEquals(1, TokenTotals.batchSizeBucket(2));
        assertEquals(2, TokenTotals.batchSizeBucket(3));
        assertEquals(2, TokenTotals.batchSizeBucket(4));
        assertEquals(3, TokenTotals.batchSizeBucket(5));
        assertEquals(10, TokenTotals.batchSizeBucket(1024));
        assertEquals(11, TokenTotals.batchSizeBucket(1025));
        assertEquals(11, TokenTotals.batchSizeBucket(100_000));
        assertEquals(List.of("1", "2", "3-4", "5-8", "513-1024", ">1024"), List.of(TokenTotals.batchSizeLabel(0),
                TokenTotals.batchSizeLabel(1), TokenTotals.batchSizeLabel(2), TokenTotals.batchSizeLabel(3),
                TokenTotals.batchSizeLabel(10), TokenTotals.batchSizeLabel(11)));
    }

    @Test
    void speculativeDecodingShowsTheDraftsKeptInThePanelAndTheHeader() throws IOException {
        ui.body = BodyPanel.REQUESTS;
        Snapshot s = serverSnapshot();
        TokenTotals t = s.total().tokens();
        TokenTotals withDrafts = new TokenTotals(t.decodeCalls(), t.prefillCalls(), t.decodeStepCalls(),
                t.failedCalls(), t.tokensPrefill(), t.tokensDecode(), t.prefillBusyNs(), t.decodeBusyNs(),
                t.contexts(), t.requests(), t.activeRequests(), t.batchesUnread(), t.batchSizes(), t.sequences(),
                new SpeculativeTotals(10, 40, 30, 0, 55, 120, List.of(10L, 9L, 7L, 4L)),
                t.encodeCalls(), t.encodeTokens());
        // 120 columns: the header's latency row ends with the drafts kept, after the requests.
        render(withTokens(s, withDrafts, withDrafts), 120);
        int line = find(terminal, "speculative:");
        assertTrue(line > find(terminal, "PHASE"), Fixtures.screen(terminal));
        assertEquals(" speculative: 10 verifications, 30/40 drafts kept (75%), by position 10 9 7 4; draft: 55 calls",
                row(terminal, line).stripTrailing());
        assertTrue(find(terminal, "drafts kept 75%") >= 0, "the header: " + Fixtures.screen(terminal));
        render(serverSnapshot(), 120);
        assertEquals(-1, find(terminal, "speculative:"), "no row without speculative decoding");
        assertEquals(-1, find(terminal, "drafts kept"), Fixtures.screen(terminal));
    }
}
