package dev.infertop.model;

import java.util.List;

/**
 * Token-layer counts over some span (one interval, or the whole run). Where llama_decode's batches carry
 * per-token sequences and positions (a server, an app), each token is a prompt or a generated token of its
 * sequence and a call's busy time is split between the two by its tokens; otherwise (llama_batch_get_one:
 * llama-bench) a call with one token is a decode step and one with more is prefill.
 *
 * @param requests       requests that reached their first output (per-sequence accounting only)
 * @param activeRequests sequences that decoded a token in the span
 * @param batchesUnread  batches with per-token arrays that did not fit llama_batch's layout (counted by size)
 * @param batchSizes     llama_decode calls by tokens per call, in {@link #BATCH_SIZE_BUCKETS} (1, 2, 3-4, ...)
 * @param sequences      the sequences that decoded lately (per-sequence accounting only)
 * @param speculative    speculative decoding: draft and verification figures (target tokens only above)
 * @param encodeCalls    llama_process(ENCODE) calls, an encoder-decoder model's encoder passes: apart from every
 *                       figure above, which are the decoder's
 * @param encodeTokens   the tokens of those calls whose count was known (the probe sends -1 when it is not)
 * @param source         where the figures above come from: the API's calls, or the graphs where it is not called
 * @param fromGraphs     what the graphs alone said over the span (the figures above when {@code source} is GRAPHS)
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
        long batchesUnread,
        List<Long> batchSizes,
        List<SequenceStatus> sequences,
        SpeculativeTotals speculative,
        long encodeCalls,
        long encodeTokens,
        TokenSource source,
        GraphTokenCounts fromGraphs) {

    /** Bucket upper bounds of {@link #batchSizes}: 1, 2, 4, ..., 1024 tokens, then more. */
    public static final int BATCH_SIZE_BUCKETS = 12;

    public static final TokenTotals EMPTY = new TokenTotals(0, 0, 0, 0, 0, 0, 0, 0, 0);

    public TokenTotals {
        batchSizes = List.copyOf(batchSizes);
        sequences = List.copyOf(sequences);
        speculative = speculative == null ? SpeculativeTotals.EMPTY : speculative;
        source = source == null ? TokenSource.API : source;
        fromGraphs = fromGraphs == null ? GraphTokenCounts.EMPTY : fromGraphs;
    }

    /** From the API's calls, no graph figures (a snapshot written before the graphs were read, tests). */
    public TokenTotals(long decodeCalls, long prefillCalls, long decodeStepCalls, long failedCalls, long tokensPrefill,
                       long tokensDecode, long prefillBusyNs, long decodeBusyNs, int contexts, long requests,
                       int activeRequests, long batchesUnread, List<Long> batchSizes, List<SequenceStatus> sequences,
                       SpeculativeTotals speculative, long encodeCalls, long encodeTokens) {
        this(decodeCalls, prefillCalls, decodeStepCalls, failedCalls, tokensPrefill, tokensDecode, prefillBusyNs,
                decodeBusyNs, contexts, requests, activeRequests, batchesUnread, batchSizes, sequences, speculative,
                encodeCalls, encodeTokens, TokenSource.API, GraphTokenCounts.EMPTY);
    }

    /** The same figures, said to come from {@code newSource}, with the graphs' own beside. */
    public TokenTotals withSource(TokenSource newSource, GraphTokenCounts graphCounts) {
        return new TokenTotals(decodeCalls, prefillCalls, decodeStepCalls, failedCalls, tokensPrefill, tokensDecode,
                prefillBusyNs, decodeBusyNs, contexts, requests, activeRequests, batchesUnread, batchSizes, sequences,
                speculative, encodeCalls, encodeTokens, newSource, graphCounts);
    }

    /** Without encoder passes (a decoder-only model, or a release without llama_process). */
    public TokenTotals(long decodeCalls, long prefillCalls, long decodeStepCalls, long failedCalls, long tokensPrefill,
                       long tokensDecode, long prefillBusyNs, long decodeBusyNs, int contexts, long requests,
                       int activeRequests, long batchesUnread, List<Long> batchSizes, List<SequenceStatus> sequences,
                       SpeculativeTotals speculative) {
        this(decodeCalls, prefillCalls, decodeStepCalls, failedCalls, tokensPrefill, tokensDecode, prefillBusyNs,
                decodeBusyNs, contexts, requests, activeRequests, batchesUnread, batchSizes, sequences, speculative,
                0, 0);
    }

    /** Without speculative decoding or encoder passes. */
    public TokenTotals(long decodeCalls, long prefillCalls, long decodeStepCalls, long failedCalls, long tokensPrefill,
                       long tokensDecode, long prefillBusyNs, long decodeBusyNs, int contexts, long requests,
                       int activeRequests, long batchesUnread, List<Long> batchSizes, List<SequenceStatus> sequences) {
        this(decodeCalls, prefillCalls, decodeStepCalls, failedCalls, tokensPrefill, tokensDecode, prefillBusyNs,
                decodeBusyNs, contexts, requests, activeRequests, batchesUnread, batchSizes, sequences,
                SpeculativeTotals.EMPTY, 0, 0);
    }

    /** The bucket of a call of {@code tokens} tokens: 0 for one, then powers of two (3-4 is 2), the last open. */
    public static int batchSizeBucket(int tokens) {
        return tokens <= 1 ? 0 : Math.min(BATCH_SIZE_BUCKETS - 1, 64 - Long.numberOfLeadingZeros(tokens - 1L));
    }

    /** A bucket's label: "1", "2", "3-4", ..., "513-1024", ">1024". */
    public static String batchSizeLabel(int bucket) {
        if (bucket == 0) {
            return "1";
        }
        if (bucket == BATCH_SIZE_BUCKETS - 1) {
            return ">" + (1 << (bucket - 1));
        }
        long low = (1L << (bucket - 1)) + 1;
        long high = 1L << bucket;
        return low == high ? Long.toString(high) : low + "-" + high;
    }

    /** As before per-sequence accounting: no request figures. */
    public TokenTotals(long decodeCalls, long prefillCalls, long decodeStepCalls, long failedCalls, long tokensPrefill,
                       long tokensDecode, long prefillBusyNs, long decodeBusyNs, int contexts) {
        this(decodeCalls, prefillCalls, decodeStepCalls, failedCalls, tokensPrefill, tokensDecode, prefillBusyNs,
                decodeBusyNs, contexts, 0, 0, 0, List.of(), List.of());
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

    private static double perSecond(long count, long ns) {
        return ns <= 0 ? 0.0 : count * 1e9 / ns;
    }
}
