package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.Snapshot;

import java.util.ArrayList;
import java.util.List;

/** Every key, from the key table the loop uses: one line per action with its keys and what it does. */
public final class HelpPanel implements Panel {
    /** One action: its keys as the user types them, and its description. */
    public record Entry(List<String> keys, String description) {}

    private final Theme theme;
    private final List<Entry> entries;

    public HelpPanel(Theme theme, List<Entry> entries) {
        this.theme = theme;
        this.entries = List.copyOf(entries);
    }

    public List<Entry> entries() {
        return entries;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, 0, " HELP  keys (config/keys.conf, ~/.config/infertop/keys.conf)   lanes: "
                + "letter = op class, . = barrier wait, ! = unbalanced thread", width);
        if (drawFlowing(g, width, rows)) {
            ui.helpScroll = 0;
            return;
        }
        drawScrolling(g, width, rows, ui);
    }

    static final int KEY_WIDTH = 16;

    /** One screen line of the scrolling layout: the keys on an entry's first line, blank on its continuations. */
    record Line(String keys, String text) {}

    /** Every entry with its description wrapped at word boundaries into {@code textWidth} columns: nothing cut. */
    List<Line> lines(int textWidth) {
        List<Line> lines = new ArrayList<>();
        for (Entry entry : entries) {
            String keys = " " + String.join(" ", entry.keys());
            for (String part : wrap(entry.description(), Math.max(10, textWidth))) {
                lines.add(new Line(keys, part));
                keys = "";
            }
        }
        return lines;
    }

    public static List<String> wrap(String text, int width) {
        List<String> parts = new ArrayList<>();
        String rest = text;
        while (rest.length() > width) {
            int cut = rest.lastIndexOf(' ', width);
            if (cut <= 0) {
                cut = width; // one word longer than the column: split it
            }
            parts.add(rest.substring(0, cut));
            rest = rest.substring(cut).stripLeading();
        }
        parts.add(rest);
        return parts;
    }

    /**
     * One entry per line (long descriptions wrapped), scrolled by {@code ui.helpScroll} (clamped here, where the
     * number of lines is known) when they do not all fit; the last row then says which lines show and how to
     * scroll.
     */
    private void drawScrolling(TextGraphics g, int width, int rows, UiState ui) {
        List<Line> lines = lines(width - KEY_WIDTH - 1);
        int body = Math.max(1, rows - 1);
        boolean scrolls = lines.size() > body;
        if (scrolls) {
            body = Math.max(1, body - 1);
        }
        int top = Math.max(0, Math.min(ui.helpScroll, lines.size() - body));
        ui.helpScroll = top;
        for (int i = 0; i < body; i++) {
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, 0, i + 1, "", width);
            if (top + i >= lines.size()) {
                continue;
            }
            Line line = lines.get(top + i);
            theme.apply(g, Theme.Role.TITLE);
            Cells.put(g, 0, i + 1, line.keys(), KEY_WIDTH);
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, KEY_WIDTH, i + 1, line.text(), width - KEY_WIDTH);
        }
        if (scrolls) {
            int last = Math.min(lines.size(), top + body);
            theme.apply(g, Theme.Role.HEADING);
            Cells.put(g, 0, body + 1, String.format(java.util.Locale.ROOT,
                    " %s lines %d-%d of %d  Up/Down PgUp/PgDn Home/End scroll, Esc closes",
                    top > 0 && last < lines.size() ? "more \u25b2\u25bc" : top > 0 ? "more \u25b2" : "more \u25bc",
                    top + 1, last, lines.size()), width);
        }
    }

    private static final int FLOW_KEY_WIDTH = 9;

    /**
     * One entry per line, two short ones side by side, in table order: all of them fit at 80x24 this way,
     * where fixed columns would cut the long descriptions. False (nothing drawn) when they do not fit.
     */
    private boolean drawFlowing(TextGraphics g, int width, int rows) {
        int half = width / 2;
        List<int[]> lines = new ArrayList<>(); // entry indexes per line: {left, right or -1}
        for (int i = 0; i < entries.size(); i++) {
            boolean isShort = FLOW_KEY_WIDTH + entries.get(i).description().length() < half;
            if (FLOW_KEY_WIDTH + entries.get(i).description().length() > width) {
                return false;
            }
            int[] last = lines.isEmpty() ? null : lines.getLast();
            if (isShort && last != null && last[1] == -1 && last[0] >= 0
                    && FLOW_KEY_WIDTH + entries.get(last[0]).description().length() < half) {
                last[1] = i;
            } else {
                lines.add(new int[] {i, -1});
            }
        }
        if (lines.size() > rows - 1) {
            return false;
        }
        for (int row = 1; row < rows; row++) {
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, 0, row, "", width);
            if (row - 1 >= lines.size()) {
                continue;
            }
            int[] line = lines.get(row - 1);
            for (int slot = 0; slot < 2 && line[slot] >= 0; slot++) {
                Entry entry = entries.get(line[slot]);
                int x = slot * half;
                theme.apply(g, Theme.Role.TITLE);
                Cells.put(g, x, row, " " + String.join(" ", entry.keys()), FLOW_KEY_WIDTH);
                theme.apply(g, Theme.Role.NORMAL);
                Cells.put(g, x + FLOW_KEY_WIDTH, row, entry.description(),
                        (line[1] >= 0 && slot == 0 ? half : width) - x - FLOW_KEY_WIDTH);
            }
        }
        return true;
    }
}
