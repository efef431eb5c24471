package dev.infertop.view;

import dev.infertop.model.Layer;
import dev.infertop.model.TokenSource;
import dev.infertop.model.WhisperTotals;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OverheadEstimate;
import dev.infertop.model.RunState;
import dev.infertop.model.SafeText;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenTotals;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Five rows: the target; backends and probe layers; prefill and decode tokens/s with sparklines; TTFT/TPOT,
 * lost events and the cost of watching (the probes' estimated share of a CPU, infertop's own measured CPU).
 */
public final class HeaderPanel implements Panel {
    public static final int ROWS = 5;

    private final Theme theme;
    private final List<String> layerKeys;

    /** @param layerKeys the key that toggles each layer, in {@link dev.infertop.model.Layer} order ("" if none) */
    public HeaderPanel(Theme theme, List<String> layerKeys) {
        this.theme = theme;
        this.layerKeys = List.copyOf(layerKeys);
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        TokenTotals tokens = s.shown().tokens();
        long spanNs = OperatorRows.spanNs(s);

        String model = s.target().modelFile() == null ? "?" : Path.of(s.target().modelFile()).getFileName().toString();
        int threads = s.interval().operators().lanes().size();
        String state = ui.endState != null ? stateLabel(ui.endState, ui.followName) : ui.frozen ? "FROZEN" : "running";
        String left = String.format(Locale.ROOT, "infertop  pid %d %s  model %s  %s", s.target().pid(),
                s.target().command(), model, threads > 0 ? threads + " threads" : "");
        String right = SafeText.of(String.format(Locale.ROOT, " %s  %.2gs ", state, ui.refreshSeconds));
        theme.apply(g, Theme.Role.TITLE);
        Cells.put(g, 0, 0, left, width);
        theme.apply(g, ui.endState != null || ui.frozen ? Theme.Role.WARN : Theme.Role.GOOD);
        if (width > right.length()) {
            Cells.put(g, width - right.length(), 0, right, right.length());
        }

        StringBuilder backends = new StringBuilder("backends ");
        List<BackendTotals> list = s.shown().backends();
        if (list.isEmpty()) {
            backends.append("-");
        }
        for (BackendTotals backend : list) {
            backends.append(String.format(Locale.ROOT, "%s %.0f%% ", backend.backend(),
                    100 * backend.busyFraction(spanNs)));
        }
        theme.apply(g, Theme.Role.NORMAL);
        Cells.put(g, 0, 1, backends.toString(), width);
        int col = Math.min(width, Math.max(backends.length() + 1, 22));
        String layersLabel = "layers ";
        Cells.put(g, col, 1, layersLabel, Math.max(0, width - col));
        col += layersLabel.length();
        for (LayerStatus layer : s.layers()) {
            String key = layer.layer().ordinal() < layerKeys.size() ? layerKeys.get(layer.layer().ordinal()) : "";
            String text = (key.isEmpty() ? "" : key + ":") + layer.layer().id() + " " + layer.state().label()
                    + (layer.layer() == Layer.OPERATOR && layer.state() == LayerStatus.State.ON
                    ? s.budget().windowsText() : "") + "  ";
            if (col >= width) {
                break;
            }
            theme.apply(g, switch (layer.state()) {
                case ON -> Theme.Role.GOOD;
                case PARTIAL, UNAVAILABLE -> Theme.Role.WARN;
                case OFF -> Theme.Role.DIM;
            });
            Cells.put(g, col, 1, text, Math.min(text.length(), width - col));
            col += text.length();
        }
        theme.apply(g, Theme.Role.NORMAL);
        if (col < width) {
            Cells.put(g, col, 1, "", width - col);
        }

        // Cost of watching, on the right of the speed rows: the one estimate every output shows, infertop's own
        // measurement. The budget's own words where it has an estimate; else the records' hits, and "(guess)"
        // where no hit cost was measured either.
        String probes = costText(s);
        String self = ui.selfCpuFraction < 0 ? "" : String.format(Locale.ROOT, " infertop %.1f%% cpu %d MB",
                100 * ui.selfCpuFraction, ui.selfRssBytes >> 20);
        int costWidth = width >= 80 ? 26 : 0;
        int sparkWidth = Math.max(0, Math.min(60, width - SPEED_LABEL_WIDTH - costWidth));
        if (WhisperTotals.isWhisperOnly(s)) {
            // whisper.cpp: its own units where llama.cpp's tokens per second would read as an idle engine.
            whisperRows(g, s, SPEED_LABEL_WIDTH + sparkWidth);
        } else {
            speedRow(g, 2, "prefill", tokens.prefillTokensPerSecond(), ui.prefillHistory(sparkWidth), sparkWidth);
            speedRow(g, 3, "decode", tokens.decodeTokensPerSecond(), ui.decodeHistory(sparkWidth), sparkWidth);
        }
        theme.apply(g, Theme.Role.DIM);
        int costColumn = SPEED_LABEL_WIDTH + sparkWidth;
        Cells.put(g, costColumn, 2, costWidth > 0 ? Cells.right(probes, width - costColumn) : "", width - costColumn);
        Cells.put(g, costColumn, 3, costWidth > 0 ? Cells.right(self, width - costColumn) : "", width - costColumn);

        LatencySummary ttft = s.shown().ttft();
        LatencySummary tpot = s.shown().tpot();
        String latency = String.format(Locale.ROOT, "TTFT p50 %s p99 %s ms  TPOT p50 %s p99 %s ms  lost %d",
                OperatorColumn.ms(ttft.p50Ms()), OperatorColumn.ms(ttft.p99Ms()), OperatorColumn.ms(tpot.p50Ms()),
                OperatorColumn.ms(tpot.p99Ms()), s.lostEvents());
        if (s.limits().droppedTotal() > 0) {
            // What the target chose (names, GUIDs, op ids, threads, ...) outgrew a collector bound (the JSON's
            // "limits": what was folded into "other" or dropped, run so far): beside "lost".
            latency += String.format(Locale.ROOT, " capped %d", s.limits().droppedTotal());
        }
        if (s.total().tokens().requests() > 0) {
            // A server: sequences followed token by token; how many decoded in this interval.
            latency += String.format(Locale.ROOT, "  requests: %d active, %d answered", s.interval().tokens().activeRequests(),
                    s.total().tokens().requests());
        }
        var speculative = s.total().tokens().speculative();
        if (speculative.draftTokens() > 0) {
            // Speculative decoding: the share of drafted tokens the target kept, over the run.
            latency += String.format(Locale.ROOT, "  drafts kept %.0f%%", 100 * speculative.acceptanceRate());
        }
        String thief = SchedPanel.worstLabel(s);
        if (!thief.isEmpty()) {
            latency += "  " + thief;
        }
        // Which source the token figures have: the API's calls (last, a detail), or the graphs where llama_decode is
        // not called and nothing seen yet (first, said in full: the speed rows are not an idle engine's 0 tok/s).
        TokenSource source = WhisperTotals.tokenSource(s);
        latency = source == TokenSource.API ? latency + "  tokens: api"
                : source.state() + "  " + latency;
        theme.apply(g, s.lostEvents() > 0 || s.limits().droppedTotal() > 0 ? Theme.Role.WARN : Theme.Role.NORMAL);
        Cells.put(g, 0, 4, latency, width);
    }

    static final int SPEED_LABEL_WIDTH = 25;

    /** The two speed rows of a whisper.cpp program: encoder passes and audio, then decoder tokens. */
    private void whisperRows(TextGraphics g, Snapshot s, int width) {
        theme.apply(g, Theme.Role.NORMAL);
        Cells.put(g, 0, 2, whisperEncoderText(s), width);
        Cells.put(g, 0, 3, whisperDecoderText(s), width);
    }

    /** "encoder  2 passes  audio 3.0 s  12.5x real time" (the run so far; "real time ?" before a transcription ends). */
    static String whisperEncoderText(Snapshot s) {
        WhisperTotals w = s.total().whisper();
        double rtf = w.realTimeFactor();
        return String.format(Locale.ROOT, "encoder %6d passes  audio %.1f s  %s", w.encoderPasses(), w.audioSeconds(),
                Double.isNaN(rtf) ? "real time ? (no transcription ended)" : String.format(Locale.ROOT,
                        "%.2fx real time", rtf));
    }

    /** "decoder  318 tokens in 64 calls  41.0 tok/s" (tokens: the run's; the rate: this interval's). */
    static String whisperDecoderText(Snapshot s) {
        WhisperTotals w = s.total().whisper();
        double rate = s.interval().whisper().decoderTokensPerSecond(s.interval().spanNs());
        return String.format(Locale.ROOT, "decoder %6d tokens in %d calls  %s", w.decoderTokens(), w.decoderCalls(),
                w.decoderCalls() == 0 ? "(no decoder call yet)"
                        : Double.isNaN(rate) ? "" : String.format(Locale.ROOT, "%.1f tok/s", rate));
    }

    private void speedRow(TextGraphics g, int row, String label, double tokensPerSecond, double[] history,
                          int sparkWidth) {
        theme.apply(g, Theme.Role.NORMAL);
        Cells.put(g, 0, row, String.format(Locale.ROOT, "%-8s%10.1f tok/s", label, tokensPerSecond),
                SPEED_LABEL_WIDTH);
        theme.apply(g, Theme.Role.GOOD);
        Cells.put(g, SPEED_LABEL_WIDTH, row, Cells.sparkline(history, sparkWidth), sparkWidth);
    }

    static String stateLabel(RunState endState, String followName) {
        return switch (endState) {
            case EXITED -> "TARGET EXITED";
            case DONE -> "done (-n reached)";
            case FOLLOWING -> "TARGET EXITED, waiting for " + followName;
            case RUNNING, STOPPED, REPLAY -> endState.text();
        };
    }

    /** The header's cost cell for {@code s}: the {@link OverheadEstimate}, in its source's words. */
    static String costText(Snapshot s) {
        OverheadEstimate estimate = OverheadEstimate.of(s);
        if (estimate.source() == OverheadEstimate.Source.BUDGET) {
            return " " + s.budget().costText();
        }
        return String.format(Locale.ROOT, " probes ~%.1f%% cpu (%s)", 100 * estimate.fraction(),
                estimate.hitCost().measured() ? "est." : "guess");
    }
}
