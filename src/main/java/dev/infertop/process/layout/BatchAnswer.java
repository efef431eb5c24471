package dev.infertop.process.layout;

import dev.infertop.process.BatchLayout;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * What the calibration child prints for a libllama ({@link BatchProbe}) and the root process reads back, as
 * strictly as {@link LayoutAnswer}: {@code infertop-batch 1}, one {@code batch pos=24 n_seq_id=32 seq_id=40
 * logits=48} line, {@code end}; or {@code error <one line>}. The offsets are then checked by {@link #check}.
 */
final class BatchAnswer {
    private BatchAnswer() {}

    static final String HEADER = "infertop-batch 1";
    static final int MAX_BYTES = 256;
    private static final List<String> KEYS = List.of("pos", "n_seq_id", "seq_id", "logits");

    static String write(BatchLayout layout) {
        return HEADER + "\nbatch pos=" + layout.posOffset() + " n_seq_id=" + layout.nSeqIdOffset() + " seq_id="
                + layout.seqIdOffset() + " logits=" + layout.logitsOffset() + "\nend\n";
    }

    static BatchLayout read(String text, Path library) throws CalibrationException {
        if (text.length() > MAX_BYTES && !text.startsWith(LayoutAnswer.ERROR)) {
            throw malformed(library, "it is over " + MAX_BYTES + " bytes");
        }
        if (text.startsWith(LayoutAnswer.ERROR)) {
            String line = text.substring(LayoutAnswer.ERROR.length()).lines().findFirst().orElse("");
            throw CalibrationException.of(library, LayoutAnswer.printable(line));
        }
        List<String> lines = text.lines().toList();
        if (lines.size() != 3 || !lines.get(0).equals(HEADER) || !lines.get(2).equals("end")) {
            throw malformed(library, "it is not 3 lines from '" + HEADER + "' to 'end'");
        }
        List<String> words = Arrays.asList(lines.get(1).split(" ", -1));
        if (words.size() != KEYS.size() + 1 || !words.getFirst().equals("batch")) {
            throw malformed(library, "line 2 is not 'batch' and " + KEYS.size() + " fields");
        }
        int[] values = new int[KEYS.size()];
        for (int i = 0; i < KEYS.size(); i++) {
            String word = words.get(i + 1);
            String prefix = KEYS.get(i) + "=";
            if (!word.startsWith(prefix) || !word.substring(prefix.length()).matches("[0-9]{1,3}")) {
                throw malformed(library, "field " + (i + 1) + " is not " + KEYS.get(i) + "=<offset>");
            }
            values[i] = Integer.parseInt(word.substring(prefix.length()));
        }
        BatchLayout layout = new BatchLayout(values[0], values[1], values[2], values[3]);
        check(library, layout);
        return layout;
    }

    /**
     * What any llama_batch the BPF program reads must satisfy: pointer-aligned offsets inside the probe's
     * 128-byte window, after n_tokens, all different, pos before n_seq_id (how {@link BatchProbe} told them apart).
     */
    static void check(Path library, BatchLayout layout) throws CalibrationException {
        int[] offsets = {layout.posOffset(), layout.nSeqIdOffset(), layout.seqIdOffset(), layout.logitsOffset()};
        for (int offset : offsets) {
            if (offset < 8 || offset > (BatchProbe.WORDS - 1) * 8 || offset % 8 != 0) {
                throw CalibrationException.of(library, "llama_batch offset " + offset + " is out of range");
            }
        }
        if (Arrays.stream(offsets).distinct().count() != offsets.length || layout.posOffset() > layout.nSeqIdOffset()) {
            throw CalibrationException.of(library, "llama_batch offsets " + Arrays.toString(offsets) + " overlap");
        }
    }

    private static CalibrationException malformed(Path library, String what) {
        return CalibrationException.of(library, "the calibration child's answer is malformed: " + what);
    }
}
