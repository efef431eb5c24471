package dev.infertop.model;

/**
 * Token-layer counts over some span (one interval, or the whole run). A llama_decode call with one token is a
 * decode step; with more it is prefill. Busy time is the time spent inside those calls.
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
        int contexts) {

    public static final TokenTotals EMPTY = new TokenTotals(0, 0, 0, 0, 0, 0, 0, 0, 0);

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
