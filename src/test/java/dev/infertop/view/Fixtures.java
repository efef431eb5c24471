package dev.infertop.view;

import dev.infertop.model.OpSampleTotals;
import com.googlecode.lanterna.TextCharacter;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.Figures;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.LatencyDistribution;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OpClass;
import dev.infertop.model.OpTotals;
import dev.infertop.model.OperatorTotals;
import dev.infertop.model.Interferer;
import dev.infertop.model.RunState;
import dev.infertop.model.SchedOpTotals;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.ThreadLane;
import dev.infertop.model.ThreadTotals;
import dev.infertop.model.TokenTotals;

import java.util.Arrays;
import java.util.List;

/** A fixed snapshot for rendering tests, and helpers to read a virtual terminal back. */
public final class Fixtures {
    private Fixtures() {}

    public static final long SECOND = 1_000_000_000L;

    public static OpTotals op(String name, long groups, long wallMs, double p50, double p99, double max, String shape) {
        double[] values = {p50 / 2, p50 * 0.8, p50, p50 * 1.2, p50 * 1.5, p50 * 1.8, p99, max * 0.95, max, max};
        return new OpTotals(name, groups, groups, wallMs * 1_000_000, wallMs * 1_500_000, wallMs * 200_000,
                new LatencySummary(groups, p50, p50 * 1.5, p99, max, p50), shape,
                new LatencyDistribution(LatencyDistribution.PLOT_PERCENTILES, values));
    }

    /** Lane cells: all idle but the last four: norm, wait, matmul, attention (oldest first). */
    public static ThreadLane lane(int tid, String now) {
        byte[] cells = new byte[200];
        Arrays.fill(cells, ThreadLane.IDLE);
        cells[196] = (byte) OpClass.NORM.ordinal();
        cells[197] = ThreadLane.WAIT;
        cells[198] = (byte) OpClass.MATMUL.ordinal();
        cells[199] = (byte) OpClass.ATTENTION.ordinal();
        return new ThreadLane(tid, now, 50_000_000L, 10 * SECOND, cells);
    }

    public static Snapshot snapshot(LayerStatus.State operatorState) {
        return snapshot(operatorState, new TargetInfo(4242, "llama-bench", "/cache/models/bench.gguf", List.of()),
                List.of(op("MUL_MAT", 4000, 600, 0.12, 0.30, 0.41, "ffn_up-3 [2816,1,1,1]"),
                        op("RMS_NORM+MUL", 1000, 100, 0.09, 0.2, 0.25, "attn_norm-3 [1024,1,1,1]"),
                        op("SOFT_MAX", 500, 50, 0.08, 0.11, 0.5, "kq_soft_max-3 [32,1,16,1]")));
    }

    /** The fixed snapshot with another target and other op rows (e.g. hostile names). */
    public static Snapshot snapshot(LayerStatus.State operatorState, TargetInfo target, List<OpTotals> ops) {
        List<OpTotals> groups = List.of(
                op("blk.0 attention", 3000, 400, 0.1, 0.2, 0.3, "Kcur-0 [64,16,1,1]"),
                op("blk.0 ffn", 2500, 350, 0.1, 0.2, 0.3, "ffn_up-0 [2816,1,1,1]"));
        List<ThreadTotals> threads = List.of(
                new ThreadTotals(101, 5500, 900_000_000L, 100_000_000L, 0, 0),
                new ThreadTotals(102, 5500, 880_000_000L, 120_000_000L, 1, 0),
                new ThreadTotals(103, 5500, 500_000_000L, 500_000_000L, 1, 3));
        List<ThreadLane> lanes = List.of(lane(101, "MUL_MAT"), lane(102, "MUL_MAT"), lane(103, "SOFT_MAX"));
        OperatorTotals operators = operatorState == LayerStatus.State.ON
                ? new OperatorTotals(ops, threads, 69, 0, groups, lanes).withSampled(SAMPLED, lanes)
                : OperatorTotals.EMPTY;
        TokenTotals interval = new TokenTotals(70, 1, 69, 0, 64, 69, 16_000_000, 1_000_000_000, 1);
        LatencySummary ttft = new LatencySummary(1, 16, 16, 16, 16, 16);
        LatencySummary tpot = new LatencySummary(69, 14.2, 15, 16.5, 17, 14.5);
        return new Snapshot(7, RunState.RUNNING, target,
                new Figures(SECOND, interval, ttft, tpot, List.of(new BackendTotals("CPU", 70, 43_000, 980_000_000L)),
                        new BackendTotals("CPU", 70, 43_000, 970_000_000L), operators, SchedTotals.EMPTY,
                        CounterTotals.EMPTY, List.of()),
                new Figures(7 * SECOND, interval, ttft, tpot,
                        List.of(new BackendTotals("CPU", 490, 301_000, 6_860_000_000L)),
                        new BackendTotals("CPU", 490, 301_000, 0), operators, SchedTotals.EMPTY,
                        CounterTotals.EMPTY, List.of()),
                0,
                List.of(new LayerStatus(Layer.TOKEN, LayerStatus.State.ON, "", List.of()),
                        new LayerStatus(Layer.GRAPH, LayerStatus.State.ON, "", List.of()),
                        new LayerStatus(Layer.OPERATOR, operatorState,
                                operatorState == LayerStatus.State.ON ? "" : "switched off live", List.of())),
                MoeTotals.EMPTY);
    }

    /**
     * Sched layer figures: thread 101 waited 300 ms for a CPU, 102 100 ms; a busy loop "hog" (pid 777) ran
     * 330 ms of that; 20 000 handler runs machine-wide.
     */
    public static SchedTotals sched() {
        return new SchedTotals(
                List.of(new SchedThreadTotals(101, 600_000_000L, 300_000_000L, 100_000_000L, 50, 30),
                        new SchedThreadTotals(102, 800_000_000L, 100_000_000L, 100_000_000L, 40, 5)),
                List.of(new SchedOpTotals("MUL_MAT", 250_000_000L, 20_000_000L),
                        new SchedOpTotals("SOFT_MAX", 30_000_000L, 0)),
                List.of(new Interferer(777, "hog", 330_000_000L, false),
                        new Interferer(12, "kworker/0:1", 10_000_000L, false),
                        new Interferer(4242, "llama-bench", 5_000_000L, true)),
                1000, 300, 20_000);
    }

    /**
     * The live view drawn once, monochrome, with {@code ui}'s body panel, into a virtual terminal of
     * {@code columns} x {@code rows} that is returned to be read back.
     */
    public static DefaultVirtualTerminal drawn(Snapshot snapshot, UiState ui, int columns, int rows) {
        DefaultVirtualTerminal terminal = new DefaultVirtualTerminal(
                new com.googlecode.lanterna.TerminalSize(columns, rows));
        try {
            com.googlecode.lanterna.screen.TerminalScreen screen =
                    new com.googlecode.lanterna.screen.TerminalScreen(terminal);
            screen.startScreen();
            new MonitorScreen(Theme.MONOCHROME, List.of("1", "2", "3", "6"),
                    List.of(new HelpPanel.Entry(List.of("q"), "quit")), "h help")
                    .draw(screen.newTextGraphics(), snapshot, ui);
            screen.refresh(com.googlecode.lanterna.screen.Screen.RefreshType.DELTA);
            // Not stopped: stopping clears the virtual terminal; it holds nothing but its buffers.
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return terminal;
    }

    /** The first row that starts with {@code prefix}; fails with the screen when none does. */
    public static int rowStarting(DefaultVirtualTerminal terminal, String prefix) {
        for (int r = 0; r < terminal.getTerminalSize().getRows(); r++) {
            if (row(terminal, r).startsWith(prefix)) {
                return r;
            }
        }
        throw new AssertionError("no row starts with '" + prefix + "':\n" + screen(terminal));
    }

    /** The text of one row, as the terminal shows it. */
    public static String row(DefaultVirtualTerminal terminal, int row) {
        StringBuilder text = new StringBuilder();
        for (int col = 0; col < terminal.getTerminalSize().getColumns(); col++) {
            text.append(terminal.getCharacter(col, row).getCharacterString());
        }
        return text.toString();
    }

    public static TextCharacter cell(DefaultVirtualTerminal terminal, int col, int row) {
        return terminal.getCharacter(col, row);
    }

    /** The row whose text contains {@code text}, or -1. */
    public static int find(DefaultVirtualTerminal terminal, String text) {
        for (int row = 0; row < terminal.getTerminalSize().getRows(); row++) {
            if (row(terminal, row).contains(text)) {
                return row;
            }
        }
        return -1;
    }

    public static String screen(DefaultVirtualTerminal terminal) {
        StringBuilder text = new StringBuilder();
        for (int row = 0; row < terminal.getTerminalSize().getRows(); row++) {
            text.append(row(terminal, row)).append('\n');
        }
        return text.toString();
    }

    /** Clock samples over the fixture's second: 500 Hz on 2 threads, most in MUL_MAT. */
    static final OpSampleTotals SAMPLED = new OpSampleTotals(2_000_000, 1000, 10,
            150, 40, List.of(new OpSampleTotals.Op("MUL_MAT", 640, 0.8),
                    new OpSampleTotals.Op("SOFT_MAX", 160, 0.2)),
            List.of(new OpSampleTotals.Thread(101, 500, "MUL_MAT"),
                    new OpSampleTotals.Thread(102, 500, "MUL_MAT")), 4000, 120,
            new OpSampleTotals.Between(3000, 20,
                    List.of(new OpSampleTotals.Op("MUL_MAT", 2400, 0.8))));

}
