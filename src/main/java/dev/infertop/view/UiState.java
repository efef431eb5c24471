package dev.infertop.view;

import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;

/**
 * What the user chose in the live view, and the little history the view keeps itself (tokens/s for the
 * sparklines, infertop's own CPU and memory). Owned by the UI thread; the collector never sees it.
 */
public final class UiState {
    public enum Rows {
        OPS("OP", "by op"), TENSOR_GROUPS("TENSOR GROUP", "by tensor group");

        final String title;
        final String label;

        Rows(String title, String label) {
            this.title = title;
            this.label = label;
        }
    }

    public static final int HISTORY = 120;

    public Rows rows = Rows.OPS;
    public OperatorColumn sortColumn = OperatorColumn.SHARE;
    public boolean sortDescending = true;
    public String filter = "";
    public boolean editingFilter;
    /** Name of the selected row, kept across refreshes while rows move; index used when it vanished. */
    public String selectedName;
    public int selectedIndex;
    public int scroll;
    public boolean frozen;
    /** The help, over the whole screen. */
    public boolean help;
    /** What fills the body: the operator table or one panel in its place. */
    public BodyPanel body = BodyPanel.OPERATORS;
    public double refreshSeconds = 1.0;
    public String status = "";
    /** Set when the collector's final snapshot came: why the run ended (with --follow: waiting for the next). */
    public RunState endState;
    /** With --follow: the process name waited for once the target exited. */
    public String followName;
    public double selfCpuFraction = -1;
    public long selfRssBytes = -1;
    /** First line of the help shown, when the help scrolls (it does not all fit); the help panel clamps it. */
    public int helpScroll;

    private final double[] prefillHistory = new double[HISTORY];
    private final double[] decodeHistory = new double[HISTORY];
    private int historyCount;
    private long lastSequence = -1;

    /** Appends a snapshot's tokens/s to the sparkline history (once per snapshot). */
    public void record(Snapshot snapshot) {
        if (snapshot.sequence() == lastSequence || snapshot.isFinal()) {
            return;
        }
        lastSequence = snapshot.sequence();
        int slot = historyCount % HISTORY;
        prefillHistory[slot] = snapshot.interval().tokens().prefillTokensPerSecond();
        decodeHistory[slot] = snapshot.interval().tokens().decodeTokensPerSecond();
        historyCount++;
    }

    /** The last {@code n} (or fewer) values, oldest first. */
    public double[] prefillHistory(int n) {
        return last(prefillHistory, n);
    }

    public double[] decodeHistory(int n) {
        return last(decodeHistory, n);
    }

    private double[] last(double[] ring, int n) {
        int count = Math.min(Math.min(n, historyCount), HISTORY);
        double[] result = new double[count];
        for (int i = 0; i < count; i++) {
            result[i] = ring[(historyCount - count + i) % HISTORY];
        }
        return result;
    }
}
