package dev.infertop.model;

/**
 * Token-layer counts over some span (one interval, or the whole run). Where llama_decode's batches carry
 * per-token sequences and positions (a server, an app), each token is a prompt or a generated token of its
 * sequence and a call's busy time is split between the two by its tokens; otherwise (llama_batch_get_one:
 * llama-bench) a call with one token is a decode step and one with more is prefill.
 *
 * @param requests       requests that reached their first output (per-sequence accounting only)
 * @param activeRequests sequences that decoded a token in the span
 * @param batchesUnread  batches with per-token arrays that did not fit llama_batch's layout (counted by size)
 */
public record TokenTotals(
        long decodeCalls,
        long prefillCalls,
        long decodeStepCalls,
        long failedCalls,
        long tokensPrefill,
        long tokensDecode,
        long prefillBusyNs,
        long decodeBusyNs,
        int contexts,
        long requests,
        int activeRequests,
        long batchesUnread) {

    public static final TokenTotals EMPTY = new TokenTotals(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** As before per-sequence accounting: no request figures. */
    public TokenTotals(long decodeCalls, long prefillCalls, long decodeStepCalls, long failedCalls, long tokensPrefill,
                       long tokensDecode, long prefillBusyNs, long decodeBusyNs, int contexts) {
        this(decodeCalls, prefillCalls, decodeStepCalls, failedCalls, tokensPrefill, tokensDecode, prefillBusyNs,
                decodeBusyNs, contexts, 0, 0, 0);
    }

    /** Engine speed while prefilling: prompt tokens per second spent in prefill calls. */
    public double prefillTokensPerSecond() {
        return perSecond(tokensPrefill, prefillBusyNs);
    }

    /** Engine speed while generating: tokens per second spent in single-token calls (llama-bench's tg figure). */
    public double decodeTokensPerSecond() {
        return perSecond(tokensDecode, decodeBusyNs);
    }

    /** Tokens generated per second of wall-clock time over {@code wallNs}. */
    public double decodeThroughputPerSecond(long wallNs) {
        return perSecond(tokensDecode, wallNs);
    }

    public double prefillThroughputPerSecond(long wallNs) {
        return perSecond(tokensPrefill, wallNs);
    }

    private static double perSecond(long count, long ns) {
        return ns <= 0 ? 0.0 : count * 1e9 / ns;
    }
}
