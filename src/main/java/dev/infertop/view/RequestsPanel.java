package dev.infertop.view;

import dev.infertop.model.SpeculativeTotals;
import com.googlecode.lanterna.graphics.TextGraphics;
import dev.infertop.model.SequenceStatus;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenTotals;

import java.util.List;
import java.util.Locale;

/**
 * A server's sequences (its slots) as the batches showed them: each one's phase (reading its prompt, or
 * generating), the current request's prompt and generated tokens, its TTFT, the latest time between two of its
 * outputs, and how long it has been idle; under them, the interval's llama_decode calls by batch size, which
 * is what says the server is batching; with speculative decoding, a last row with the run's drafts kept.
 * Opened in place of the operator table (key r).
 */
public final class RequestsPanel implements Panel {
    private final Theme theme;

    public RequestsPanel(Theme theme) {
        this.theme = theme;
    }

    @Override
    public void draw(TextGraphics g, int width, int rows, Snapshot s, UiState ui) {
        TokenTotals tokens = s.shown().tokens();
        List<SequenceStatus> sequences = tokens.sequences();
        List<Long> sizes = tokens.batchSizes();
        int histogramRows = 0;
        for (long count : sizes) {
            histogramRows += count > 0 ? 1 : 0;
        }
        SpeculativeTotals speculative = s.total().tokens().speculative();
        int speculativeRows = speculative.seen() ? 1 : 0;
        int sequenceRows = Math.max(1, rows - 1 - speculativeRows - (histogramRows > 0 ? histogramRows + 1 : 0));
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, 0, String.format(Locale.ROOT, " %-14s %4s %-10s %7s %9s %9s %9s %7s", "CONTEXT", "SEQ",
                "PHASE", "PROMPT", "GENERATED", "TTFTms", "TPOTms", "IDLEs"), width);
        int row = 1;
        if (sequences.isEmpty()) {
            theme.apply(g, Theme.Role.DIM);
            Cells.put(g, 0, row++, s.total().tokens().requests() > 0
                    ? " no sequence decoded in the last 10 s"
                    : " no requests: batches without sequences (llama-bench), or the token layer is off", width);
        }
        for (int i = 0; i < sequences.size() && row < rows && i < sequenceRows; i++) {
            SequenceStatus q = sequences.get(i);
            theme.apply(g, q.idleNs() > s.interval().spanNs() ? Theme.Role.DIM : Theme.Role.NORMAL);
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-14s %4d %-10s %7d %9d %9s %9s %7.1f",
                    String.format(Locale.ROOT, "0x%x", q.context()), q.seq(), q.generating() ? "generating" : "prompt",
                    q.promptTokens(), q.generatedTokens(), q.ttftNs() > 0 ? OperatorColumn.ms(q.ttftNs() / 1e6) : "-",
                    q.lastTpotNs() > 0 ? OperatorColumn.ms(q.lastTpotNs() / 1e6) : "-", q.idleNs() / 1e9), width);
        }
        if (speculativeRows > 0 && row < rows) {
            theme.apply(g, Theme.Role.NORMAL);
            Cells.put(g, 0, row++, speculativeLine(speculative), width);
        }
        if (histogramRows == 0 || row + 1 >= rows) {
            Cells.blank(g, row, rows);
            return;
        }
        long most = 1;
        long calls = 0;
        for (long count : sizes) {
            most = Math.max(most, count);
            calls += count;
        }
        theme.apply(g, Theme.Role.HEADING);
        Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-10s %7s  llama_decode calls by tokens per call (%d)",
                "TOKENS", "CALLS", calls), width);
        int barWidth = Math.max(0, width - 21);
        for (int bucket = 0; bucket < sizes.size() && row < rows; bucket++) {
            long count = sizes.get(bucket);
            if (count == 0) {
                continue;
            }
            theme.apply(g, Theme.Role.NORMAL);
            int bar = (int) Math.max(1, Math.round((double) barWidth * count / most));
            Cells.put(g, 0, row++, String.format(Locale.ROOT, " %-10s %7d  %s", TokenTotals.batchSizeLabel(bucket),
                    count, "#".repeat(Math.min(bar, barWidth))), width);
        }
        Cells.blank(g, row, rows); // every cell is drawn each frame: rows of a longer last frame are cleared
    }

    /** The run's speculative decoding in one row: steps, drafts kept and where, the draft model's calls. */
    static String speculativeLine(SpeculativeTotals spec) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT,
                " speculative: %d verifications, %d/%d drafts kept", spec.verifySteps(), spec.acceptedTokens(),
                spec.draftTokens()));
        if (spec.draftTokens() > 0) {
            line.append(String.format(Locale.ROOT, " (%.0f%%)", 100 * spec.acceptanceRate()));
        }
        if (!spec.acceptedByPosition().isEmpty()) {
            line.append(", by position");
            spec.acceptedByPosition().forEach(count -> line.append(' ').append(count));
        }
        line.append(String.format(Locale.ROOT, "; draft: %d calls", spec.draftCalls()));
        return line.toString();
    }
}
