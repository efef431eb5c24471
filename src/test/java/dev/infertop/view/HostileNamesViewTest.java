package dev.infertop.view;

import dev.infertop.json.JsonLinesView;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Limits;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Names the target chose, with every kind of control character in them, drawn by the live view and written by
 * the batch view: shown as escapes, never obeyed, and the view keeps drawing (Lanterna throws on a control).
 */
class HostileNamesViewTest {
    private static final String TITLE = "\u001b]0;pwned\u0007";

    /** The target's name is made visible where it enters; op rows here are raw, so the view's own guard acts. */
    private static Snapshot hostile() {
        return Fixtures.snapshot(LayerStatus.State.ON,
                new TargetInfo(4242, "ll" + TITLE + "\u009b\u007f", "/m/x\u202e.gguf", List.of()),
                List.of(Fixtures.op("MUL_MAT" + TITLE, 4000, 600, 0.12, 0.30, 0.41, "a\u0000b [1,1,1,1]"),
                        Fixtures.op("名前\u001b", 1000, 100, 0.09, 0.2, 0.25, "n\u0085 [1,1,1,1]")));
    }

    @Test
    void theLiveViewShowsControlsAsEscapesInTheirColumns() throws Exception {
        DefaultVirtualTerminal terminal = new DefaultVirtualTerminal(new TerminalSize(120, 30));
        TerminalScreen screen = new TerminalScreen(terminal);
        screen.startScreen();
        try {
            UiState ui = new UiState();
            for (int tick = 0; tick < 3; tick++) { // a few frames, as a live run draws them
                ui.record(hostile());
                new MonitorScreen(Theme.COLOUR, List.of("1", "2", "3"),
                        List.of(new HelpPanel.Entry(List.of("q"), "quit")), "h help  q quit")
                        .draw(screen.newTextGraphics(), hostile(), ui);
                screen.refresh(Screen.RefreshType.DELTA);
            }
            assertTrue(row(terminal, 0).startsWith(
                    "infertop  pid 4242 ll\\x1b]0;pwned\\x07\\x9b\\x7f  model x\\u202e.gguf  3 threads"), row(terminal, 0));
            String screenText = Fixtures.screen(terminal);
            assertTrue(screenText.contains("MUL_MAT\\x1b]0;pwned\\x07"), screenText);
            int wide = Fixtures.find(terminal, "\\x1b ");
            assertTrue(wide >= 0, screenText);
            for (int r = 0; r < terminal.getTerminalSize().getRows(); r++) {
                for (int c = 0; c < terminal.getTerminalSize().getColumns(); c++) {
                    String shown = terminal.getCharacter(c, r).getCharacterString();
                    shown.codePoints().forEach(cp -> assertFalse(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)
                            || cp == 0x202e, "raw control in the view: U+" + Integer.toHexString(cp)));
                }
            }
        } finally {
            screen.stopScreen();
        }
    }

    @Test
    void theBatchViewWritesNoRawControl() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new BatchTextView(new PrintStream(bytes, true, StandardCharsets.UTF_8)).show(hostile());
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("ll\\x1b]0;pwned\\x07\\x9b\\x7f"), text);
        text.codePoints().forEach(cp -> assertFalse((cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f)
                || cp == 0x202e, "raw U+" + Integer.toHexString(cp) + " in " + text));
    }

    @Test
    void theJsonViewWritesNoRawControl() {
        String line = JsonLinesView.toJson(hostile());
        line.codePoints().forEach(cp -> assertFalse(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x202e,
                "raw U+" + Integer.toHexString(cp) + " in " + line));
        assertTrue(line.contains("\"command\":\"ll\\\\x1b]0;pwned\\\\x07\\\\x9b\\\\x7f\""), line);
    }

    @Test
    void whatTheCollectorDroppedShowsInTheHeaderAndTheJson() throws Exception {
        Snapshot capped = Fixtures.snapshot(LayerStatus.State.ON).withLimits(new Limits(List.of(
                Limits.Bound.of("tensor_names", 32768, "tensor_names_cap", 32768,
                        Limits.Past.capped("name_records_dropped", 5)),
                Limits.Bound.of("tensor_groups", 321, "tensor_groups_cap", 320,
                        Limits.Past.capped("tensor_names_folded", 7)),
                Limits.Bound.of(null, 0, "moe_layers_cap", 128, Limits.Past.capped("moe_reads_dropped", 2)),
                // Housekeeping (threads that exited) is no cap: not in "capped N".
                Limits.Bound.of("threads", 3, "threads_cap", 256, Limits.Past.capped("thread_records_folded", 0),
                        Limits.Past.housekeeping("threads_pruned", 40)))));
        DefaultVirtualTerminal terminal = new DefaultVirtualTerminal(new TerminalSize(100, 24));
        TerminalScreen screen = new TerminalScreen(terminal);
        screen.startScreen();
        try {
            UiState ui = new UiState();
            ui.record(capped);
            new MonitorScreen(Theme.COLOUR, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                    "h help  q quit").draw(screen.newTextGraphics(), capped, ui);
            screen.refresh(Screen.RefreshType.DELTA);
            assertTrue(row(terminal, 4).contains("lost 0 capped 14"), row(terminal, 4));
        } finally {
            screen.stopScreen();
        }
        String json = JsonLinesView.toJson(capped);
        assertTrue(json.contains("\"limits\":{\"tensor_names\":32768,\"tensor_names_cap\":32768,"
                + "\"name_records_dropped\":5,\"tensor_groups\":321,\"tensor_groups_cap\":320,"
                + "\"tensor_names_folded\":7,\"moe_layers_cap\":128,\"moe_reads_dropped\":2,\"threads\":3,"
                + "\"threads_cap\":256,\"thread_records_folded\":0,\"threads_pruned\":40}"), json);
    }
}
