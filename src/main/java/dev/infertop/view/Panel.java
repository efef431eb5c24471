package dev.infertop.view;

import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.Snapshot;

/** One part of the live view: draws a snapshot and the UI state into its region, every cell of it. */
public interface Panel {
    /** Draws into {@code g}'s whole region; a region with no cell draws nothing. */
    default void draw(TextGraphics g, Snapshot snapshot, UiState ui) {
        TerminalSize size = g.getSize();
        if (size.getColumns() > 0 && size.getRows() > 0) {
            draw(g, size.getColumns(), size.getRows(), snapshot, ui);
        }
    }

    /** Draws into a region of {@code width} columns and {@code rows} rows, both at least 1. */
    void draw(TextGraphics g, int width, int rows, Snapshot snapshot, UiState ui);
}
