package dev.infertop.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * infertop's live view in a real terminal: the launcher in a detached tmux session of a fixed size, driven with
 * send-keys and read back with capture-pane. The pane's shell prints {@code EXITED-<status>} when infertop ends
 * and then stays, so the last screen and the exit status can be read. Closing kills the session (a SIGHUP to
 * whatever still runs in it); closing twice is harmless. Each pane has a tmux server of its own (its socket named
 * after the session): on the shared default server, a session started while the last one's kill was ending that
 * server was lost with it ("no server running").
 */
final class TmuxPane implements AutoCloseable {
    private static final Path TMUX = Path.of("/usr/bin/tmux");
    private static final Path LAUNCHER = Path.of("src/scripts/infertop").toAbsolutePath();

    private final String session;
    private boolean closed;

    private TmuxPane(String session) {
        this.session = session;
    }

    /** Skips the test locally (fails it in CI) where tmux or the launcher script is missing. */
    static void require() {
        Requirements.require(Files.isExecutable(TMUX), "needs tmux (apt-get install -y tmux) to drive the live view");
        Requirements.require(Files.isExecutable(LAUNCHER), "needs the launcher " + LAUNCHER);
    }

    /**
     * Starts {@code infertop ARGS} (the launcher, on the packaged jar) in a new detached session named
     * {@code session}, {@code columns} x {@code rows}, in the test's working directory.
     *
     * @param infertopArgs joined with spaces into a {@code sh -c} line: no quotes or spaces inside one
     */
    static TmuxPane start(String session, int columns, int rows, String... infertopArgs) throws Exception {
        return start(session, columns, rows, null, infertopArgs);
    }

    /** As {@link #start(String, int, int, String...)}, with infertop's working directory {@code directory}. */
    static TmuxPane start(String session, int columns, int rows, Path directory, String... infertopArgs)
            throws Exception {
        require();
        String command = LAUNCHER + " " + String.join(" ", infertopArgs);
        List<String> newSession = new ArrayList<>(List.of(TMUX.toString(), "-L", session, "new-session", "-d", "-s",
                session, "-x", Integer.toString(columns), "-y", Integer.toString(rows)));
        if (directory != null) {
            newSession.addAll(List.of("-c", directory.toString()));
        }
        newSession.addAll(List.of("-e", "INFERTOP_JAR=" + Requirements.jar().toAbsolutePath(),
                "sh -c '" + command + "; echo EXITED-$?; sleep 600'"));
        Processes.output(newSession.toArray(String[]::new));
        return new TmuxPane(session);
    }

    /**
     * Starts a shell command line, as a user types it, in a new detached session named {@code session}
     * ({@code columns} x {@code rows}) in {@code directory}; the pane prints {@code EXITED-<status>} when it ends.
     */
    static TmuxPane startShell(String session, int columns, int rows, Path directory, String commandLine)
            throws Exception {
        require();
        Processes.output(TMUX.toString(), "-L", session, "new-session", "-d", "-s", session, "-x",
                Integer.toString(columns),
                "-y", Integer.toString(rows), "-c", directory.toString(),
                "-e", "INFERTOP_JAR=" + Requirements.jar().toAbsolutePath(),
                "sh -c '" + commandLine + "; echo EXITED-$?; sleep 600'");
        return new TmuxPane(session);
    }

    /** The window keeps its size whatever clients attach, and changes only by {@link #resize}. */
    void keepSize() throws Exception {
        tmux(session, "set-option", "-t", session, "window-size", "manual");
    }

    void resize(int columns, int rows) throws Exception {
        tmux(session, "resize-window", "-t", session, "-x", Integer.toString(columns), "-y", Integer.toString(rows));
    }

    /** tmux send-keys: each argument a key name ("Enter", "Escape") or, after "-l", literal text. */
    void keys(String... keys) throws Exception {
        List<String> command = new ArrayList<>(List.of("send-keys", "-t", session));
        command.addAll(List.of(keys));
        tmux(session, command.toArray(String[]::new));
    }

    /** The visible screen, one line per row (trailing blanks cut by tmux). */
    String capture() throws Exception {
        return tmux(session, "capture-pane", "-p", "-t", session);
    }

    /**
     * The first screen, captured every 250 ms, that satisfies {@code condition}; the test fails after
     * {@code timeoutSeconds} naming {@code what} was awaited and showing the last screen.
     */
    String awaitScreen(String what, Predicate<String> condition, int timeoutSeconds) throws Exception {
        String screen = pollScreen(condition, timeoutSeconds);
        if (!condition.test(screen)) {
            fail("screen never showed " + what + " within " + timeoutSeconds + " s; last screen:\n" + screen);
        }
        return screen;
    }

    /** As {@link #awaitScreen} but never fails: the screen that satisfied {@code condition}, or the last one. */
    String pollScreen(Predicate<String> condition, int timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        String screen = "";
        while (System.nanoTime() < deadline) {
            screen = capture();
            if (condition.test(screen)) {
                return screen;
            }
            Thread.sleep(250);
        }
        return screen;
    }

    /** A tmux format variable of the pane, e.g. {@code #{alternate_on}} (1 while the alternate screen is on). */
    String paneFormat(String format) throws Exception {
        return tmux(session, "display-message", "-p", "-t", session, format).strip();
    }

    /** The infertop JVM in the pane: the launcher script execs java in place of the shell's child. */
    ProcessHandle infertop() throws Exception {
        long shell = Long.parseLong(tmux(session, "display-message", "-p", "-t", session, "#{pane_pid}").strip());
        return ProcessHandle.of(shell).orElseThrow().children()
                .filter(p -> p.info().command().orElse("").endsWith("java")).findFirst().orElseThrow();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        if (!closed) {
            closed = true;
            tmux(session, "kill-session", "-t", session);
        }
    }

    private static String tmux(String session, String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(TMUX.toString(), "-L", session));
        command.addAll(List.of(arguments));
        return Processes.output(command.toArray(String[]::new));
    }
}
