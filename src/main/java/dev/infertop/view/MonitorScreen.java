package dev.infertop.view;

import com.googlecode.lanterna.TerminalPosition;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.Snapshot;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The whole live view laid out for the current size: header, thread lanes, operator table (or the latency
 * plot under it, or the help), and a footer line with key hints, the filter being typed, or a status.
 * Regions are recomputed every frame, so a resize re-lays out; every cell is drawn, so no clear is needed.
 */
public final class MonitorScreen {
    /** Below this the view only says the terminal is too small. */
    public static final int MIN_COLUMNS = 40;
    public static final int MIN_ROWS = 10;

    private final Theme theme;
    private final HeaderPanel header;
    private final ThreadLanesPanel lanes;
    private final OperatorTablePanel table;
    private final LatencyPanel latency;
    private final HelpPanel help;
    /** The body panels that fill the body alone, by the key that opens them. */
    private final Map<BodyPanel, Panel> bodies = new EnumMap<>(BodyPanel.class);
    private final String hints;

    /**
     * @param layerKeys keys toggling each layer, in Layer order
     * @param hints     the footer's key hints (from the key table)
     */
    public MonitorScreen(Theme theme, List<String> layerKeys, List<HelpPanel.Entry> helpEntries, String hints) {
        this.theme = theme;
        this.header = new HeaderPanel(theme, layerKeys);
        this.lanes = new ThreadLanesPanel(theme);
        this.table = new OperatorTablePanel(theme);
        this.latency = new LatencyPanel(theme);
        this.help = new HelpPanel(theme, helpEntries);
        bodies.put(BodyPanel.THREAD_STATES, new SchedPanel(theme));
        bodies.put(BodyPanel.COUNTERS, new CountersPanel(theme));
        bodies.put(BodyPanel.BACKENDS, new BackendsPanel(theme));
        bodies.put(BodyPanel.REQUESTS, new RequestsPanel(theme));
        bodies.put(BodyPanel.MOE, new MoePanel(theme));
        bodies.put(BodyPanel.ROOFLINE, new RooflinePanel(theme));
        this.hints = hints;
    }

    public void draw(TextGraphics g, Snapshot s, UiState ui) {
        TerminalSize size = g.getSize();
        int width = size.getColumns();
        int height = size.getRows();
        if (width < MIN_COLUMNS || height < MIN_ROWS) {
            theme.apply(g, Theme.Role.WARN);
            Cells.put(g, 0, 0, "infertop: terminal too small (" + width + "x" + height + ", need "
                    + MIN_COLUMNS + "x" + MIN_ROWS + ")", width);
            theme.apply(g, Theme.Role.NORMAL);
            Cells.blank(g, 1, height);
            return;
        }
        int bodyRows = height - 1;
        if (ui.help) {
            help.draw(region(g, 0, bodyRows), s, ui);
        } else {
            header.draw(region(g, 0, HeaderPanel.ROWS), s, ui);
            int remaining = bodyRows - HeaderPanel.ROWS;
            // Lanes take what they want but leave the table at least a heading and four rows.
            int laneRows = Math.max(2, Math.min(ThreadLanesPanel.rowsWanted(s), remaining - 5));
            lanes.draw(region(g, HeaderPanel.ROWS, laneRows), s, ui);
            int tableTop = HeaderPanel.ROWS + laneRows;
            int tableRows = bodyRows - tableTop;
            Panel body = bodies.get(ui.body);
            if (body != null) {
                body.draw(region(g, tableTop, tableRows), s, ui);
            } else if (ui.body == BodyPanel.DETAILS) {
                int plotRows = Math.min(LatencyPanel.ROWS, Math.max(0, tableRows - 3));
                table.draw(region(g, tableTop, tableRows - plotRows), s, ui);
                latency.draw(region(g, tableTop + tableRows - plotRows, plotRows), s, ui);
            } else {
                table.draw(region(g, tableTop, tableRows), s, ui);
            }
        }
        footer(g, height - 1, width, ui);
    }

    private void footer(TextGraphics g, int row, int width, UiState ui) {
        if (ui.editingFilter) {
            theme.apply(g, Theme.Role.TITLE);
            Cells.put(g, 0, row, "Filter: " + ui.filter + "_   (Enter keeps, Esc clears)", width);
            return;
        }
        String left = ui.filter.isEmpty() ? "" : "[/" + ui.filter + "] ";
        if (!ui.status.isEmpty()) {
            left += ui.status + "  ";
        }
        theme.apply(g, ui.status.isEmpty() ? Theme.Role.DIM : Theme.Role.WARN);
        Cells.put(g, 0, row, left, Math.min(left.length(), width));
        theme.apply(g, Theme.Role.DIM);
        if (left.length() < width) {
            Cells.put(g, left.length(), row, hints, width - left.length());
        }
    }

    private static TextGraphics region(TextGraphics g, int top, int rows) {
        return g.newTextGraphics(new TerminalPosition(0, top), new TerminalSize(g.getSize().getColumns(),
                Math.max(0, rows)));
    }
}
