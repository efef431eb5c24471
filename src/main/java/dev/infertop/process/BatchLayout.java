package dev.infertop.process;

/**
 * Where {@code struct llama_batch}'s per-token arrays sit in the struct llama_decode takes by value, as the
 * target's own libllama lays it out: found at attach time by {@code process.layout.BatchCalibrator} from what the
 * library's {@code llama_batch_init} allocates (in the unprivileged calibration child, cached per build).
 * {@link #LLAMA_H} is llama.h's layout, used only where there is no shared libllama to ask (llama.cpp linked
 * into the program) or the child fails, with a line saying so. Either way each batch is checked against what
 * those arrays must hold (see the SequenceTracker of agg), and batches that do not fit are
 * counted by their size alone and reported, never guessed at.
 *
 * @param posOffset    {@code llama_pos *pos}
 * @param nSeqIdOffset {@code int32_t *n_seq_id}
 * @param seqIdOffset  {@code llama_seq_id **seq_id}
 * @param logitsOffset {@code int8_t *logits}
 */
public record BatchLayout(int posOffset, int nSeqIdOffset, int seqIdOffset, int logitsOffset) {
    /**
     * llama.h's llama_batch on LP64 since late 2023: {@code int32_t n_tokens} (padded to 8), then the pointers
     * token, embd, pos, n_seq_id, seq_id, logits.
     */
    public static final BatchLayout LLAMA_H = new BatchLayout(24, 32, 40, 48);
}
