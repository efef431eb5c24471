package dev.infertop.view;

import dev.infertop.model.ExpertsOnDevices;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.MoeTotals;
import dev.infertop.model.Snapshot;

import java.util.Locale;

/**
 * The MoE layer's panel (key m): a heatmap of layer × expert selection frequency over the sliding window,
 * decode and prefill side by side; per layer the imbalance (CV); under it one row per expert with its
 * share of tokens, MoE node time, time share and reuse distance.
 *
 * <p>Shading is by characters, darkest for the hottest cell, so it reads the same without colour
 * (NO_COLOR) and in any font: {@link #SHADES}, each step an eighth of the hottest cell of its heatmap.
 */
public final class MoePanel implements Panel {
    /** Nine levels: nothing, then eighths of the hottest cell. */
    static final String SHADES = " .:-=+*#@";

    private final Theme theme;

    public MoePanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int height, Snapshot s, UiState ui) {
        MoeTotals moe = s.moe();
        int row = 0;
        theme.apply(g, Theme.Role.TITLE);
        Cells.put(g, 0, row++, title(moe), width);
        theme.apply(g, Theme.Role.NORMAL);
        Cells.put(g, 0, row++, reading(moe), width);
        String devices = onDevices(ExpertsOnDevices.nodes(s.total()), moe);
        if (devices != null && row < height) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, devices, width);
            theme.apply(g, Theme.Role.NORMAL);
        }
        String why = unavailable(s);
        if (why != null || moe.expertCount() == 0) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, why != null ? why
                    : "no MUL_MAT_ID node read yet (a dense model, or no graph has run since the plan was made)", width);
            theme.apply(g, Theme.Role.NORMAL);
            Cells.blank(g, row, height);
            return;
        }
        int experts = moe.expertCount();
        int layers = moe.layerCount();
        int cell = 2 * (2 * experts) + 24 <= width ? 2 : 1;
        int mapWidth = Math.max(experts * cell, "PREFILL".length() + 1);
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, row++, "LAYER " + Cells.fit("DECODE", mapWidth) + " " + Cells.fit("PREFILL", mapWidth)
                + "     CV", width);
        theme.apply(g, Theme.Role.NORMAL);
        long decodeMax = max(moe.windowDecode(), moe.windowRowsDecode());
        long prefillMax = max(moe.windowPrefill(), moe.windowRowsPrefill());
        int expertRows = Math.min(experts, Math.max(0, height - row - 2 - Math.min(layers, 2)));
        int mapRows = Math.max(0, height - row - 2 - expertRows);
        for (int l = 0; l < layers && mapRows > 0; l++) {
            if (l == mapRows - 1 && layers > mapRows) {
                Cells.put(g, 0, row++, "  … " + (layers - l) + " more layers (JSON has them all)", width);
                break;
            }
            String line = Cells.right(Integer.toString(l), 5) + " "
                    + Cells.fit(shades(moe.windowDecode(), l, cell, decodeMax, experts), mapWidth) + " "
                    + Cells.fit(shades(moe.windowPrefill(), l, cell, prefillMax, experts), mapWidth) + " "
                    + Cells.right(l < moe.cvByLayer().length ? number(moe.cvByLayer()[l], 2) : "-", 6);
            Cells.put(g, 0, row++, line, width);
            mapRows--;
        }
        theme.apply(g, Theme.Role.DIM);
        Cells.put(g, 0, row++, "shade \"" + SHADES + "\": none, then eighths of the hottest cell of each map", width);
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, row++, "EXPERT  TOKEN%   NODES  NODE p50ms  p99ms  SHARE ms  REUSE tok  SINCE tok", width);
        theme.apply(g, Theme.Role.NORMAL);
        long windowRows = 0;
        for (int l = 0; l < layers; l++) {
            windowRows += at(moe.windowRowsDecode(), l) + at(moe.windowRowsPrefill(), l);
        }
        for (MoeTotals.ExpertStats e : moe.experts()) {
            if (row >= height) {
                break;
            }
            long selections = 0;
            for (int l = 0; l < layers; l++) {
                selections += at(moe.windowDecode(), l, e.expert()) + at(moe.windowPrefill(), l, e.expert());
            }
            String tokenShare = windowRows == 0 ? "-" : number(100.0 * selections / windowRows, 1);
            Cells.put(g, 0, row++, String.format(Locale.ROOT, "%6d  %6s  %6d  %10s  %5s  %8s  %9s  %9s", e.expert(),
                    tokenShare, e.activeNodes(), number(e.nodeP50Ms(), 3), number(e.nodeP99Ms(), 2),
                    number(e.rowShareMs(), 1), number(e.meanReuseTokens(), 1),
                    e.tokensSinceLast() < 0 ? "never" : Long.toString(e.tokensSinceLast())), width);
        }
        Cells.blank(g, row, height);
    }

    private static String title(MoeTotals moe) {
        return String.format(Locale.ROOT, "MoE experts  window: last %d intervals  %d of %d experts per token  "
                + "imbalance CV %s", moe.windowTicks(), moe.expertsUsed(), moe.expertCount(), number(moe.meanCv(), 2));
    }

    /** How complete the reading is, and what it cost: never hidden. */
    private static String reading(MoeTotals moe) {
        return String.format(Locale.ROOT, "ids of %d nodes read (%s, bound %d B/node): %d truncated, %d graphs "
                        + "without ids, %d failed", moe.nodesRead(), bytes(moe.idBytesCopied()), moe.idBytesBound(),
                moe.nodesTruncated(), moe.graphsWithoutIds(), moe.readFailures());
    }

    /**
     * Expert matmuls a device computed: their ids are read only from the scheduler's host copies; null when none
     * ran elsewhere than on the CPU.
     */
    static String onDevices(java.util.Map<String, Long> nodes, MoeTotals moe) {
        if (nodes.isEmpty()) {
            return null;
        }
        StringBuilder where = new StringBuilder();
        nodes.forEach((backend, n) -> where.append(where.isEmpty() ? "" : ", ").append(n).append(" on ").append(backend));
        return "MUL_MAT_ID nodes computed on devices: " + where + "; their ids are read only where the scheduler "
                + "copies them back (" + moe.nodesReadFromHostCopies() + " reads)";
    }

    /** Why there is nothing to show: the layer is off or cannot run; null when it runs. */
    private static String unavailable(Snapshot s) {
        for (LayerStatus status : s.layers()) {
            if (status.layer() == Layer.MOE && status.state() != LayerStatus.State.ON) {
                return "moe layer " + status.state().label() + (status.reason().isEmpty() ? "" : ": " + status.reason());
            }
        }
        return s.moe().active() ? null : "moe layer not running (--layers ...,moe or key 4)";
    }

    /** One heatmap row: a shade per expert, {@code cell} characters wide. */
    static String shades(long[][] counts, int layer, int cell, long max, int experts) {
        StringBuilder line = new StringBuilder();
        for (int e = 0; e < experts; e++) {
            long count = layer < counts.length && e < counts[layer].length ? counts[layer][e] : 0;
            char shade = SHADES.charAt(level(count, max));
            for (int c = 0; c < cell; c++) {
                line.append(shade);
            }
        }
        return line.toString();
    }

    /** 0 for none, else 1..8: the eighth of {@code max} the count reaches (max itself is 8). */
    static int level(long count, long max) {
        if (count <= 0 || max <= 0) {
            return 0;
        }
        return (int) Math.min(8, Math.max(1, Math.ceil(8.0 * count / max)));
    }

    private static long max(long[][] counts, long[] rows) {
        long max = 0;
        for (long[] row : counts) {
            for (long c : row) {
                max = Math.max(max, c);
            }
        }
        return max;
    }

    private static long at(long[] values, int i) {
        return i < values.length ? values[i] : 0;
    }

    private static long at(long[][] values, int l, int e) {
        return l < values.length && e < values[l].length ? values[l][e] : 0;
    }

    private static String number(double value, int decimals) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    private static String bytes(long bytes) {
        return bytes < 10_240 ? bytes + " B" : bytes < 10_485_760 ? bytes / 1024 + " KiB" : bytes / 1_048_576 + " MiB";
    }
}
