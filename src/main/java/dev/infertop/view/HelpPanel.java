package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.Snapshot;

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
        int perColumn = Math.max(1, rows - 1);
        if (entries.size() > perColumn && drawPaired(g, width, perColumn)) {
            return;
        }
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

    /**
     * More actions than rows: entries whose text fits half a row go two to a row, the others one per row, in
     * order of their first appearance; false (nothing drawn) when even that does not fit.
     */
    private boolean drawPaired(TextGraphics g, int width, int rowsAvailable) {
        int half = width / 2;
        int keyWidth = 11;
        List<List<Entry>> lines = new java.util.ArrayList<>();
        List<Entry> open = null; // a line holding one half-width entry, waiting for a second
        for (Entry entry : entries) {
            boolean narrow = String.join(" ", entry.keys()).length() < keyWidth - 1
                    && entry.description().length() <= half - keyWidth - 1;
            if (!narrow) {
                lines.add(List.of(entry));
            } else if (open != null) {
                open.add(entry);
                open = null;
            } else {
                open = new java.util.ArrayList<>(List.of(entry));
                lines.add(open);
            }
        }
        if (lines.size() > rowsAvailable) {
            return false;
        }
        for (int i = 0; i < rowsAvailable; i++) {
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, 0, i + 1, "", width);
            if (i >= lines.size()) {
                continue;
            }
            List<Entry> line = lines.get(i);
            for (int c = 0; c < line.size(); c++) {
                Entry entry = line.get(c);
                int x = c * half;
                int end = line.size() == 1 ? width : x + half;
                theme.apply(g, Theme.Role.TITLE);
                Cells.put(g, x, i + 1, " " + String.join(" ", entry.keys()), keyWidth);
                theme.apply(g, Theme.Role.NORMAL);
                Cells.put(g, x + keyWidth, i + 1, entry.description(), Math.max(0, end - x - keyWidth - 1));
            }
        }
        return true;
    }
}
