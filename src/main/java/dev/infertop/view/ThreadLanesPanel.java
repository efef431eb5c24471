package dev.infertop.view;

import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.OpClass;
import dev.infertop.model.ThreadLane;
import dev.infertop.model.ThreadTotals;
import dev.infertop.model.Snapshot;

import java.util.List;
import java.util.Locale;

/**
 * One row per inference thread: its work share over the interval, what it runs now, and a strip of the last
 * seconds, one character per 50 ms cell: the op class's letter in its colour, '.' for barrier wait, ' ' idle;
 * a lower-case letter and ',' where the clock samples named the cell (no exact window covered it), and the op
 * now marked '~' when the samples named it.
 * A thread whose work share is far from the others' is marked '!' in the warning colour.
 */
public final class ThreadLanesPanel implements Panel {
    /** Work share this far (percentage points) below or above the mean marks an unbalanced thread. */
    static final double UNBALANCED_POINTS = 15;
    static final int STRIP_COLUMN = 30;
    public static final char WAIT_CHAR = '.';
    public static final char SAMPLED_WAIT_CHAR = ',';

    private final Theme theme;

    public ThreadLanesPanel(Theme theme) {
        this.theme = theme;
    }

    /** Rows this panel wants: a title and one per lane (or one saying why there is none). */
    public static int rowsWanted(Snapshot s) {
        return 1 + Math.max(1, s.interval().operators().lanes().size());
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        List<ThreadLane> lanes = s.interval().operators().lanes();
        List<ThreadTotals> threads = s.interval().operators().threads();
        int stripWidth = Math.max(0, width - STRIP_COLUMN);
        theme.apply(g, Theme.Role.HEADING);
        String seconds = lanes.isEmpty() ? "" : String.format(Locale.ROOT, " last %.1f s",
                Math.min(lanes.getFirst().cellCount(), stripWidth) * lanes.getFirst().cellNs() / 1e9)
                + (s.budget().heldWindowText().isEmpty() ? "" : ", " + s.budget().heldWindowText());
        Cells.put(g, 0, 0, Cells.fit("  TID  WORK% NOW", STRIP_COLUMN) + legend(seconds), width);
        if (rows <= 1) {
            return;
        }
        if (lanes.isEmpty()) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, 1, "  no thread activity (operator layer off, or no CPU graph yet)", width);
            Cells.blank(g, 2, rows);
            return;
        }
        double mean = 0;
        for (ThreadLane lane : lanes) {
            mean += workPercent(threads, lane.tid());
        }
        mean /= lanes.size();
        for (int i = 0; i < rows - 1; i++) {
            int row = i + 1;
            if (i >= lanes.size()) {
                theme.apply(g, Theme.Role.NORMAL);
                Cells.put(g, 0, row, "", width);
                continue;
            }
            ThreadLane lane = lanes.get(i);
            double work = workPercent(threads, lane.tid());
            boolean unbalanced = lanes.size() > 1 && Math.abs(work - mean) > UNBALANCED_POINTS;
            theme.apply(g, unbalanced ? Theme.Role.WARN : Theme.Role.NORMAL);
            Cells.put(g, 0, row, String.format(Locale.ROOT, "%c%6d %4.0f%% %s", unbalanced ? '!' : ' ', lane.tid(),
                    work, lane.currentOp()), STRIP_COLUMN - 1);
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, STRIP_COLUMN - 1, row, "|", 1);
            int first = lane.cellCount() - stripWidth;
            // Written in runs of one style: a run is one styled write of reused cells, where a write per cell
            // looked its style up, or made a TextCharacter, for each of a lane's hundred-odd columns every frame.
            StringBuilder run = new StringBuilder();
            Object runStyle = null;
            int runStart = 0;
            for (int c = 0; c <= stripWidth; c++) {
                Object style = null;
                char symbol = ' ';
                if (c < stripWidth) {
                    int cell = first + c;
                    OpClass opClass = cell < 0 ? null : lane.cellClass(cell);
                    boolean sampled = cell >= 0 && lane.sampled(cell);
                    if (opClass != null) {
                        style = opClass;
                        symbol = sampled ? Character.toLowerCase(opClass.symbol()) : opClass.symbol();
                    } else {
                        boolean waiting = cell >= 0 && lane.waiting(cell);
                        style = waiting ? Theme.Role.WAIT : Theme.Role.NORMAL;
                        symbol = !waiting ? ' ' : sampled ? SAMPLED_WAIT_CHAR : WAIT_CHAR;
                    }
                }
                if (style != runStyle && !run.isEmpty()) {
                    if (runStyle instanceof OpClass opClass) {
                        theme.applyClass(g, opClass);
                    } else {
                        theme.apply(g, (Theme.Role) runStyle);
                    }
                    Cells.put(g, STRIP_COLUMN + runStart, row, run.toString(), run.length());
                    run.setLength(0);
                }
                if (run.isEmpty()) {
                    runStyle = style;
                    runStart = c;
                }
                run.append(symbol);
            }
        }
    }

    private static String legend(String seconds) {
        StringBuilder text = new StringBuilder(seconds.isEmpty() ? "" : seconds.strip() + ": ");
        for (OpClass opClass : OpClass.values()) {
            text.append(opClass.symbol()).append(' ').append(opClass.label(), 0, Math.min(4, opClass.label().length()))
                    .append(' ');
        }
        return text.append(WAIT_CHAR).append(" wait, lower case sampled").toString();
    }

    /** Work as a share of the time the thread spent in graphs this interval, in percent. */
    static double workPercent(List<ThreadTotals> threads, int tid) {
        for (ThreadTotals thread : threads) {
            if (thread.tid() == tid) {
                return 100 * thread.workFraction();
            }
        }
        return 0;
    }
}
