package dev.infertop.tui;

import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.input.KeyStroke;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.DefaultTerminalFactory;
import com.googlecode.lanterna.terminal.Terminal;
import com.googlecode.lanterna.terminal.ansi.UnixTerminal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The full-screen terminal, like bpftop's TerminalManager: entering it switches to the alternate screen in
 * raw mode; {@link #close()} restores the terminal and is safe to call from any path (finally, the shutdown
 * hook, an error) and more than once. Ctrl-C keeps raising SIGINT (Lanterna's default), which the session's
 * shutdown hook handles like q.
 */
public final class TerminalSession implements AutoCloseable {
    private final Screen screen;
    private boolean closed;

    private TerminalSession(Screen screen) {
        this.screen = screen;
    }

    /**
     * Standard output without System.out's flush after every write: Lanterna writes a frame as one write per
     * escape sequence and character run and flushes at its end, so through System.out each of those was a
     * syscall waking the terminal (~35 per frame with few changes, hundreds for a full one). Buffered, a
     * frame is one write.
     */
    private static final java.io.OutputStream FRAME_BUFFERED_STDOUT =
            new java.io.BufferedOutputStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), 1 << 16);

    /** The process's own terminal (stdin/stdout). */
    public static TerminalSession open() throws IOException {
        Terminal terminal;
        try {
            terminal = new SttySizedTerminal();
        } catch (IOException | RuntimeException e) {
            terminal = new DefaultTerminalFactory(FRAME_BUFFERED_STDOUT, System.in, StandardCharsets.UTF_8)
                    .setForceTextTerminal(true)
                    .createTerminal();
        }
        return start(new FrameScreen(terminal));
    }

    /**
     * Lanterna's Unix terminal learns its size by moving the cursor far away and reading the terminal's cursor
     * position report from the input: a key in flight (an Esc just typed) garbles that report and the screen
     * shrinks to a few columns. The tty driver knows the size: ask it ({@code stty size}, once per resize).
     */
    private static final class SttySizedTerminal extends UnixTerminal implements FrameScreen.FrameOutput {
        SttySizedTerminal() throws IOException {
            super(System.in, FRAME_BUFFERED_STDOUT, StandardCharsets.UTF_8);
        }

        @Override
        public void writeFrame(byte[] frame) throws IOException {
            writeToTerminal(frame);
        }

        @Override
        protected TerminalSize findTerminalSize() throws IOException {
            try {
                String[] rowsColumns = runSTTYCommand("size").strip().split("\\s+");
                return new TerminalSize(Integer.parseInt(rowsColumns[1]), Integer.parseInt(rowsColumns[0]));
            } catch (IOException | RuntimeException e) {
                return super.findTerminalSize();
            }
        }
    }

    /** Any Lanterna terminal, e.g. a DefaultVirtualTerminal in tests. */
    public static TerminalSession on(Terminal terminal) throws IOException {
        return start(new FrameScreen(terminal));
    }

    private static TerminalSession start(TerminalScreen screen) throws IOException {
        screen.startScreen();
        screen.setCursorPosition(null);
        return new TerminalSession(screen);
    }

    public Screen screen() {
        return screen;
    }

    /** A key if one is waiting, else null; never blocks. */
    public KeyStroke pollKey() throws IOException {
        return screen.pollInput();
    }

    /** The next key, waiting for one (null if the terminal gave none); from one thread only. */
    public KeyStroke readKey() throws IOException {
        return screen.readInput();
    }

    /** Runs {@code listener} (on a terminal thread) whenever the terminal is resized. */
    public void onResize(Runnable listener) {
        if (screen instanceof TerminalScreen terminalScreen) {
            terminalScreen.getTerminal().addResizeListener((terminal, size) -> listener.run());
        }
    }

    /** The new size if the terminal was resized since the last call, else null. */
    public TerminalSize resizeIfNecessary() {
        return screen.doResizeIfNecessary();
    }

    /** Sends the cells that changed since the last refresh, never a full repaint. */
    public void refresh() throws IOException {
        screen.refresh(Screen.RefreshType.DELTA);
    }

    /**
     * Repaints every cell: only after a resize, when the terminal has reflowed or cut what it showed and the
     * screen's idea of it is stale.
     */
    public void refreshAll() throws IOException {
        screen.refresh(Screen.RefreshType.COMPLETE);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            screen.stopScreen();
        } catch (IOException | RuntimeException e) {
            // the terminal is gone (SSH dropped): nothing left to restore
        }
    }
}
