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
}
