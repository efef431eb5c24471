package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.Snapshot;

/** One part of the live view: draws a snapshot and the UI state into its region, every cell of it. */
public interface Panel {
    void draw(TextGraphics g, Snapshot snapshot, UiState ui);
}
