package dev.infertop.model;

import java.util.List;

/**
 * Speculative decoding over some span: a draft model proposes tokens, the target model checks them in one
 * batch (a verification step: the last sampled token and the drafts, each asking for output) and keeps the
 * drafts up to the first it disagrees with. Only the target's tokens count as prompt and generated tokens;
 * the draft context's calls are counted here.
 *
 * @param verifySteps        target batches that checked drafts
 * @param draftTokens        drafted tokens those batches checked (llama-server's spec_decode_num_draft_tokens)
 * @param acceptedTokens     drafts the target kept (llama-server's spec_decode_num_accepted_tokens)
 * @param unresolvedSteps    verification steps whose kept drafts could not be told (their request ended with no
 *                           memory removal seen, e.g. on a release without a probed seq_rm function)
 * @param draftCalls         llama_decode calls of draft contexts
 * @param draftTokensDecoded tokens those calls decoded
 * @param acceptedByPosition verification steps that kept the draft at position i (0 = the first drafted token)
 */
public record SpeculativeTotals(long verifySteps, long draftTokens, long acceptedTokens, long unresolvedSteps,
                                long draftCalls, long draftTokensDecoded, List<Long> acceptedByPosition) {
    /** Draft positions counted at most (llama-server's default draft length is 16). */
    public static final int MAX_POSITIONS = 32;

    public static final SpeculativeTotals EMPTY = new SpeculativeTotals(0, 0, 0, 0, 0, 0, List.of());

    public SpeculativeTotals {
        acceptedByPosition = List.copyOf(acceptedByPosition);
    }

    /** What was counted since {@code earlier}, a sample of the same run's totals. */
    public SpeculativeTotals since(SpeculativeTotals earlier) {
        List<Long> positions = new java.util.ArrayList<>(acceptedByPosition);
        for (int i = 0; i < positions.size() && i < earlier.acceptedByPosition.size(); i++) {
            positions.set(i, positions.get(i) - earlier.acceptedByPosition.get(i));
        }
        return new SpeculativeTotals(verifySteps - earlier.verifySteps, draftTokens - earlier.draftTokens,
                acceptedTokens - earlier.acceptedTokens, unresolvedSteps - earlier.unresolvedSteps,
                draftCalls - earlier.draftCalls, draftTokensDecoded - earlier.draftTokensDecoded, positions);
    }

    /** Whether any speculative decoding was seen. */
    public boolean seen() {
        return verifySteps > 0 || draftCalls > 0;
    }

    /** Accepted drafts over drafted tokens, 0..1; NaN when nothing was drafted. */
    public double acceptanceRate() {
        return draftTokens == 0 ? Double.NaN : (double) acceptedTokens / draftTokens;
    }
}
