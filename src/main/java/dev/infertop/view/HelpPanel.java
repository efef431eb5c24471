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
    public void draw(TextGraphics g, Snapshot s, UiState ui) {
        int width = g.getSize().getColumns();
        int rows = g.getSize().getRows();
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, 0, " HELP  keys (config/keys.conf, ~/.config/infertop/keys.conf)   lanes: "
                + "letter = op class, . = barrier wait, ! = unbalanced thread", width);
        if (drawFlowing(g, width, rows)) {
            return;
        }
        int perColumn = Math.max(1, rows - 1);
        int columns = (entries.size() + perColumn - 1) / perColumn;
        int columnWidth = columns <= 1 ? width : width / columns;
        int keyWidth = columns <= 1 ? 16 : 11;
        for (int i = 0; i < perColumn; i++) {
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, 0, i + 1, "", width);
            for (int c = 0; c < Math.max(1, columns); c++) {
                int index = c * perColumn + i;
                if (index >= entries.size()) {
                    break;
                }
                Entry entry = entries.get(index);
                int x = c * columnWidth;
                theme.apply(g, Theme.Role.TITLE);
                Cells.put(g, x, i + 1, " " + String.join(" ", entry.keys()), keyWidth);
                theme.apply(g, Theme.Role.NORMAL);
                Cells.put(g, x + keyWidth, i + 1, entry.description(), Math.max(0, columnWidth - keyWidth - 1));
            }
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
