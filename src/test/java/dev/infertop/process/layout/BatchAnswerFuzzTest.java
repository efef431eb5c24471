package dev.infertop.process.layout;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.infertop.process.BatchLayout;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The calibration child's llama_batch answer ({@link BatchProbe} runs the target's libllama), as root reads it:
 * bytes made text as {@code CalibrationSandbox} makes them (ISO-8859-1). Any answer gives either offsets the BPF
 * program can read (pointer-aligned, inside the probe's window after n_tokens, all different, pos before
 * n_seq_id) that read back equal from {@link BatchAnswer#write}, or a {@link CalibrationException} of one
 * visible, bounded line. No other exception, no hang.
 */
class BatchAnswerFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void read(byte[] answer) {
        String text = new String(answer, StandardCharsets.ISO_8859_1);
        BatchLayout layout;
        try {
            layout = BatchAnswer.read(text, LayoutAnswerFuzzTest.LIBRARY);
        } catch (CalibrationException refused) {
            LayoutAnswerFuzzTest.oneVisibleLine(refused);
            return;
        }
        int[] offsets = {layout.posOffset(), layout.nSeqIdOffset(), layout.seqIdOffset(), layout.logitsOffset()};
        for (int offset : offsets) {
            if (offset < 8 || offset + 8 > BatchProbe.WORDS * 8 || offset % 8 != 0) {
                throw new AssertionError("offset " + offset + " outside the window: " + layout);
            }
        }
        if (Arrays.stream(offsets).distinct().count() != offsets.length
                || layout.posOffset() >= layout.nSeqIdOffset()) {
            throw new AssertionError("overlapping or out of order: " + layout);
        }
        try {
            if (!BatchAnswer.read(BatchAnswer.write(layout), LayoutAnswerFuzzTest.LIBRARY).equals(layout)) {
                throw new AssertionError("does not read back equal: " + layout);
            }
        } catch (CalibrationException e) {
            throw new AssertionError("accepted, then refused: " + e.getMessage(), e);
        }
    }
}
