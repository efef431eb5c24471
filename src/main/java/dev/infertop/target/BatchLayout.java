package dev.infertop.target;

/**
 * Where {@code struct llama_batch}'s per-token arrays sit in the struct llama_decode takes by value. The
 * layout is llama.h's, unchanged since llama.cpp put positions and sequence ids in the batch (late 2023):
 * {@code int32_t n_tokens; llama_token *token; float *embd; llama_pos *pos; int32_t *n_seq_id;
 * llama_seq_id **seq_id; int8_t *logits;} on an LP64 ABI (x86-64, arm64). It is not read from the target's
 * code: each batch is instead checked against what those arrays must hold (see
 * {@code dev.infertop.agg.SequenceTracker}), and batches that do not fit are counted by their size alone and
 * reported, never guessed at.
 *
 * @param posOffset    {@code llama_pos *pos}
 * @param nSeqIdOffset {@code int32_t *n_seq_id}
 * @param seqIdOffset  {@code llama_seq_id **seq_id}
 * @param logitsOffset {@code int8_t *logits}
 */
public record BatchLayout(int posOffset, int nSeqIdOffset, int seqIdOffset, int logitsOffset) {
    /** llama.h's llama_batch on LP64: n_tokens (4, padded to 8), then six pointers. */
    public static final BatchLayout LLAMA_H = new BatchLayout(24, 32, 40, 48);
}
