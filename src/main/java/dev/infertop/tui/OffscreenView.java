package dev.infertop.tui;

import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.Snapshot;
import dev.infertop.view.MonitorScreen;
import dev.infertop.view.SnapshotView;
import dev.infertop.view.Theme;
import dev.infertop.view.UiState;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The live monitor's drawing, into a terminal held in memory: the collector warm-up runs the live view's
 * per-refresh code through it before the target starts, without touching the real screen.
 */
public final class OffscreenView implements SnapshotView {
    private static final TerminalSize SIZE = new TerminalSize(120, 40);

    private final TerminalScreen screen;
    private final MonitorScreen monitor;
    private final UiState ui = new UiState();

    private OffscreenView(TerminalScreen screen, MonitorScreen monitor) {
        this.screen = screen;
        this.monitor = monitor;
    }

    /**
     * The live monitor's screen for the keys it was given (config/keys.conf and the user's file, already read
     * without error by the live session), drawn off screen.
     */
    public static OffscreenView open(KeyTable keys, Theme theme) {
        try {
            TerminalScreen screen = new TerminalScreen(new DefaultVirtualTerminal(SIZE));
            screen.startScreen();
            return new OffscreenView(screen, LiveMonitor.screen(keys, theme));
        } catch (IOException e) {
            throw new UncheckedIOException("an in-memory terminal failed", e);
        }
    }

    @Override
    public void show(Snapshot snapshot) {
        monitor.draw(screen.newTextGraphics(), snapshot, ui);
        try {
            screen.refresh(Screen.RefreshType.DELTA);
        } catch (IOException e) {
            throw new UncheckedIOException("an in-memory terminal failed", e);
        }
    }

    @Override
    public void close() {
        try {
            screen.stopScreen();
        } catch (IOException e) {
            // in memory: nothing to restore
        }
    }
}
