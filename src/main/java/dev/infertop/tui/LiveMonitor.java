package dev.infertop.tui;

import dev.infertop.model.RunState;
import dev.infertop.process.OwnResidentMemory;
import dev.infertop.process.ProcessCpuTime;
import com.googlecode.lanterna.input.KeyStroke;
import com.googlecode.lanterna.input.KeyType;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.view.BodyPanel;
import dev.infertop.view.HelpPanel;
import dev.infertop.view.MonitorScreen;
import dev.infertop.view.OperatorColumn;
import dev.infertop.view.OperatorRows;
import dev.infertop.view.Theme;
import dev.infertop.view.UiState;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The live view's loop, on its own thread: wait for a snapshot, a key or a resize, apply keys through the
 * {@link KeyTable}, draw the {@link MonitorScreen}, send only what changed. Layer toggles and quit go back to
 * the session through {@link Controls}; the collector never reads this state.
 *
 * <p>Keys are read by a thread of their own that blocks on the terminal and wakes this loop, so the loop
 * sleeps until something happens: polling for keys many times a second cost more CPU than the token and graph
 * layers' whole budget (a timer wake-up is dear on a VM; measurements.md).
 */
public final class LiveMonitor implements Runnable {
    /** Longest sleep with nothing happening: what needs no event (a status line expiring) waits that long. */
    static final long IDLE_WAIT_MS = 1000;
    static final double[] REFRESH_STEPS = {0.25, 0.5, 1, 2, 5, 10};
    private static final long STATUS_NS = 5_000_000_000L;

    /** What the view can ask of the tracing session. */
    public interface Controls {
        /** Stop tracing (detach everything); the view ends too. */
        void quit();

        /** Switch a probe layer off or on (through the same queue as SIGUSR2). */
        void toggle(Layer layer);

        /** New time between snapshots. */
        void setIntervalSeconds(double seconds);

        /** Write a snapshot directory (at the next tick). */
        default void snapshot() {
        }

        /** Write the operator DAG of the last decode graph; the outcome in one line, for the status line. */
        default String writeDag() {
            return "no DAG here";
        }
    }

    private final TerminalSession terminal;
    private final LiveView view;
    private final KeyTable keys;
    private final Controls controls;
    private final MonitorScreen screen;
    private final UiState ui = new UiState();
    private volatile boolean quit;
    private volatile Throwable failure;
    private volatile String pendingNotice;
    private volatile String followName;
    private Snapshot shown;
    private Snapshot lastSeen;
    private long statusSetNs;
    private int fullRepaints;
    private long lastCpuNs = -1;
    private long lastCpuSampleNs;

    public LiveMonitor(TerminalSession terminal, LiveView view, KeyTable keys, Theme theme, Controls controls,
                       double refreshSeconds) {
        this.terminal = terminal;
        this.view = view;
        this.keys = keys;
        this.controls = controls;
        this.ui.refreshSeconds = refreshSeconds;
        this.screen = screen(keys, theme);
    }

    /** The screen drawn for these keys (see {@link KeyHelp}). */
    static MonitorScreen screen(KeyTable keys, Theme theme) {
        return KeyHelp.screen(keys, theme);
    }

    /** See {@link KeyHelp#helpEntries}. */
    public static List<HelpPanel.Entry> helpEntries(KeyTable keys) {
        return KeyHelp.helpEntries(keys);
    }

    /** Start of the help line of the layer toggles. */
    public static final String TOGGLE_HELP = KeyHelp.TOGGLE_HELP;

    public UiState state() {
        return ui;
    }

    /** Ends the loop (from another thread: the session stopped, or a signal). */
    public void requestQuit() {
        quit = true;
        view.wake();
    }

    public boolean quitting() {
        return quit;
    }

    /** A message from the session for the status line (any thread). */
    public void notice(String text) {
        pendingNotice = text;
        view.wake();
    }

    /** The target exited and the session waits for a new process named {@code name} (any thread). */
    public void following(String name) {
        followName = name;
        view.wake();
    }

    /** The error that ended the loop, or null. */
    public Throwable failure() {
        return failure;
    }

    /** Keys read by the key thread, for the loop; null until {@link #run} starts that thread. */
    private volatile java.util.concurrent.ConcurrentLinkedQueue<KeyStroke> readKeys;

    /**
     * Blocks on the terminal for keys and hands each to the loop, waking it. Ends at EOF (the terminal is gone:
     * handed on, the loop quits) or when the loop has quit; a daemon, so a read still blocked then ends with
     * the JVM.
     */
    private void readKeys(java.util.concurrent.ConcurrentLinkedQueue<KeyStroke> queue) {
        try {
            while (!quit) {
                KeyStroke key = terminal.readKey();
                if (key == null) {
                    continue;
                }
                queue.add(key);
                view.wake();
                if (key.getKeyType() == KeyType.EOF) {
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            queue.add(new KeyStroke(KeyType.EOF)); // input is unreadable: as if the terminal were gone
            view.wake();
        }
    }

    private KeyStroke nextKey() throws IOException {
        java.util.concurrent.ConcurrentLinkedQueue<KeyStroke> queue = readKeys;
        return queue != null ? queue.poll() : terminal.pollKey();
    }

    @Override
    public void run() {
        try {
            java.util.concurrent.ConcurrentLinkedQueue<KeyStroke> queue = new java.util.concurrent.ConcurrentLinkedQueue<>();
            readKeys = queue;
            Thread.ofPlatform().name("infertop-keys").daemon().start(() -> readKeys(queue));
            terminal.onResize(view::wake);
            while (!quit) {
                step();
                view.await(IDLE_WAIT_MS);
            }
        } catch (Throwable e) {
            failure = e;
            quit = true;
            controls.quit();
        } finally {
            ownMemory.close();
        }
    }

    /** One pass: resize, keys, new snapshot, draw if anything changed. Public for tests. */
    public void step() throws IOException {
        if (terminal.resizeIfNecessary() != null) {
            // This frame and the next are full repaints: a terminal may resize in steps (columns, then rows)
            // and reflow what it showed in between.
            fullRepaints = 2;
        }
        boolean dirty = fullRepaints == 2; // the second one goes with the next snapshot or key
        KeyStroke key;
        while (!quit && (key = nextKey()) != null) {
            if (key.getKeyType() == KeyType.EOF) { // stdin closed: the terminal is gone
                quitByUser();
                return;
            }
            if (key.getKeyType() == KeyType.Character && key.isAltDown() && !key.isCtrlDown()) {
                // ESC and the next key arrived together (a quick typist, a slow link): Lanterna reads Alt+key.
                handle(new KeyStroke(KeyType.Escape));
                handle(new KeyStroke(key.getCharacter(), false, false));
            } else {
                handle(key);
            }
            dirty = true;
        }
        Snapshot latest = view.latest();
        if (latest != null && latest != lastSeen) {
            lastSeen = latest;
            ui.record(latest);
            sampleSelf();
            if (latest.isFinal()) {
                ui.endState = latest.state();
                ui.followName = followName;
                if (shown == null) {
                    shown = latest; // a run shorter than one interval: its totals are all there is
                }
            } else {
                ui.endState = null; // a new session (--follow) is running
                if (!ui.frozen || shown == null || shown.isFinal()) {
                    shown = latest;
                }
            }
            dirty = true;
        }
        String name = followName;
        if (name != null && ui.endState != null && ui.endState != RunState.FOLLOWING) {
            ui.endState = RunState.FOLLOWING;
            ui.followName = name;
            dirty = true;
        }
        String notice = pendingNotice;
        if (notice != null) {
            pendingNotice = null;
            status(notice);
            dirty = true;
        }
        if (!ui.status.isEmpty() && System.nanoTime() - statusSetNs > STATUS_NS) {
            ui.status = "";
            dirty = true;
        }
        if (dirty && shown != null) {
            screen.draw(terminal.screen().newTextGraphics(), shown, ui);
            if (fullRepaints > 0) {
                fullRepaints--;
                terminal.refreshAll();
            } else {
                terminal.refresh();
            }
        }
    }

    private void quitByUser() {
        quit = true;
        controls.quit();
    }

    private void status(String text) {
        ui.status = text;
        statusSetNs = System.nanoTime();
    }

    void handle(KeyStroke key) {
        if (ui.editingFilter) {
            editFilter(key);
            return;
        }
        Action action = keys.action(key);
        if (action == null) {
            String name = KeyTable.keyName(key);
            if (name != null) {
                status("key " + name + " does nothing (" + keys.firstKey(Action.HELP) + " for help)");
            }
            return;
        }
        if (ui.help && scrollHelp(action)) {
            return;
        }
        List<OpTotals> rows = shown == null ? List.of() : OperatorRows.of(shown, ui);
        int page = Math.max(1, terminal.screen().getTerminalSize().getRows() - 12);
        if (action.layer() != null) {
            toggle(action.layer()); // a layer's key, whichever layer: the action carries it
            return;
        }
        if (action.panel() != null) {
            ui.body = ui.body.toggled(action.panel());
            return;
        }
        switch (action) {
            case QUIT -> quitByUser();
            case HELP -> {
                ui.help = !ui.help;
                ui.helpScroll = 0;
            }
            case UP -> select(rows, -1);
            case DOWN -> select(rows, 1);
            case PAGE_UP -> select(rows, -page);
            case PAGE_DOWN -> select(rows, page);
            case TOP -> select(rows, -rows.size());
            case BOTTOM -> select(rows, rows.size());
            case SORT_NEXT -> sortBy(1);
            case SORT_PREVIOUS -> sortBy(-1);
            case SORT_REVERSE -> ui.sortDescending = !ui.sortDescending;
            case GROUP_BY -> {
                ui.rows = ui.rows == UiState.Rows.OPS ? UiState.Rows.TENSOR_GROUPS : UiState.Rows.OPS;
                ui.selectedName = null;
                ui.selectedIndex = 0;
                ui.scroll = 0;
            }
            case FILTER -> ui.editingFilter = true;
            case FREEZE -> {
                ui.frozen = !ui.frozen;
                if (!ui.frozen && lastSeen != null && !lastSeen.isFinal()) {
                    shown = lastSeen;
                }
            }
            case FASTER -> refreshStep(-1);
            case SLOWER -> refreshStep(1);
            case SNAPSHOT -> {
                controls.snapshot();
                status("snapshot requested: written at the next tick");
            }
            case DAG -> status(controls.writeDag());
            case CLOSE -> {
                if (ui.help || ui.body != BodyPanel.OPERATORS) {
                    // Esc closes whatever is open (the help and any body panel) back to the operator table.
                    ui.help = false;
                    ui.body = BodyPanel.OPERATORS;
                } else {
                    ui.filter = "";
                }
            }
        }
    }

    /**
     * While the help is open the movement keys scroll it (by line, by page of the help's rows, to either end);
     * the help panel clamps the position. False for other actions.
     */
    private boolean scrollHelp(Action action) {
        int page = Math.max(1, terminal.screen().getTerminalSize().getRows() - 3);
        switch (action) {
            case UP -> ui.helpScroll = Math.max(0, ui.helpScroll - 1);
            case DOWN -> ui.helpScroll++;
            case PAGE_UP -> ui.helpScroll = Math.max(0, ui.helpScroll - page);
            case PAGE_DOWN -> ui.helpScroll += page;
            case TOP -> ui.helpScroll = 0;
            case BOTTOM -> ui.helpScroll = Integer.MAX_VALUE / 2;
            default -> {
                return false;
            }
        }
        return true;
    }

    private void editFilter(KeyStroke key) {
        switch (key.getKeyType()) {
            case Enter -> ui.editingFilter = false;
            case Escape -> {
                ui.editingFilter = false;
                ui.filter = "";
            }
            case Backspace -> {
                if (!ui.filter.isEmpty()) {
                    ui.filter = ui.filter.substring(0, ui.filter.length() - 1);
                }
            }
            case Character -> {
                if (!key.isCtrlDown() && ui.filter.length() < 40) {
                    ui.filter += key.getCharacter();
                }
            }
            default -> { }
        }
        ui.selectedIndex = 0;
        ui.selectedName = null;
        ui.scroll = 0;
    }

    private void select(List<OpTotals> rows, int delta) {
        if (rows.isEmpty()) {
            return;
        }
        int index = Math.max(0, Math.min(rows.size() - 1, OperatorRows.selectedIndex(rows, ui) + delta));
        ui.selectedIndex = index;
        ui.selectedName = rows.get(index).op();
    }

    private void sortBy(int direction) {
        OperatorColumn[] columns = OperatorColumn.values();
        OperatorColumn next = columns[Math.floorMod(ui.sortColumn.ordinal() + direction, columns.length)];
        ui.sortColumn = next;
        ui.sortDescending = next.descendingByDefault();
    }

    private void refreshStep(int direction) {
        int index = 0;
        for (int i = 0; i < REFRESH_STEPS.length; i++) {
            if (Math.abs(REFRESH_STEPS[i] - ui.refreshSeconds) < Math.abs(REFRESH_STEPS[index] - ui.refreshSeconds)) {
                index = i;
            }
        }
        index = Math.max(0, Math.min(REFRESH_STEPS.length - 1, index + direction));
        ui.refreshSeconds = REFRESH_STEPS[index];
        controls.setIntervalSeconds(ui.refreshSeconds);
        status(String.format(Locale.ROOT, "refresh every %.2g s", ui.refreshSeconds));
    }

    private void toggle(Layer layer) {
        if (ui.endState != null) {
            status("target gone: nothing to switch");
            return;
        }
        boolean on = false;
        if (shown != null) {
            for (LayerStatus status : shown.layers()) {
                if (status.layer() == layer) {
                    on = status.state() == LayerStatus.State.ON || status.state() == LayerStatus.State.PARTIAL;
                }
            }
        }
        controls.toggle(layer);
        status(layer.id() + " layer: switching " + (on ? "off" : "on") + " at the next interval");
    }

    private final OwnResidentMemory ownMemory = new OwnResidentMemory();

    /** infertop's own CPU share since the last sample (the process CPU clock) and its RSS. */
    private void sampleSelf() {
        try {
            long cpuNs = ProcessCpuTime.selfNs();
            long now = System.nanoTime();
            if (lastCpuNs >= 0 && now > lastCpuSampleNs) {
                ui.selfCpuFraction = (cpuNs - lastCpuNs) / (double) (now - lastCpuSampleNs);
            }
            lastCpuNs = cpuNs;
            lastCpuSampleNs = now;
            ui.selfRssBytes = ownMemory.bytes();
        } catch (IOException | RuntimeException e) {
            ui.selfCpuFraction = -1; // not Linux, or /proc unreadable: show nothing rather than a guess
        }
    }
}
