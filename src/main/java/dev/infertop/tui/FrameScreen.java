package dev.infertop.tui;

import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.Terminal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Lanterna's screen, but a delta refresh goes out as one {@link DeltaFrame} written in one piece where the
 * terminal takes raw bytes ({@link FrameOutput}); a complete refresh, and any other terminal, are Lanterna's.
 */
final class FrameScreen extends TerminalScreen {
    /** A terminal that takes a frame's bytes as they are (escapes included) in one write. */
    interface FrameOutput {
        void writeFrame(byte[] frame) throws IOException;
    }

    private final DeltaFrame delta = new DeltaFrame();
    private boolean started;

    FrameScreen(Terminal terminal) throws IOException {
        super(terminal);
    }

    @Override
    public synchronized void startScreen() throws IOException {
        super.startScreen();
        started = true;
    }

    @Override
    public synchronized void stopScreen(boolean flushInput) throws IOException {
        started = false;
        super.stopScreen(flushInput);
    }

    @Override
    public synchronized void refresh(RefreshType refreshType) throws IOException {
        if (refreshType != RefreshType.DELTA || !(getTerminal() instanceof FrameOutput output)
                || getCursorPosition() != null) {
            super.refresh(refreshType);
            return;
        }
        if (!started) {
            return;
        }
        TerminalSize size = getTerminalSize();
        TerminalSize back = getBackBuffer().getSize();
        TerminalSize front = getFrontBuffer().getSize();
        int columns = Math.min(size.getColumns(), Math.min(back.getColumns(), front.getColumns()));
        int rows = Math.min(size.getRows(), Math.min(back.getRows(), front.getRows()));
        CharSequence frame = delta.encode(getFrontBuffer(), getBackBuffer(), columns, rows);
        if (frame.length() > 0) {
            output.writeFrame(frame.toString().getBytes(StandardCharsets.UTF_8));
            getTerminal().flush();
        }
        getBackBuffer().copyTo(getFrontBuffer());
    }
}
