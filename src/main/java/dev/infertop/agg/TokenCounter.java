package dev.infertop.agg;

import dev.infertop.model.SequenceStatus;
import dev.infertop.model.SpeculativeTotals;
import dev.infertop.model.TokenTotals;

import java.util.ArrayList;
import java.util.List;

/**
 * llama_decode calls and their tokens, and apart from them llama_process(ENCODE) calls and theirs, counted once
 * for the run; an interval is the difference from the counter copied at the previous tick ({@link #freezeSince}).
 */
final class TokenCounter {
    static final TokenCounter ZERO = new TokenCounter();

    long calls;
    long prefillCalls;
    long decodeStepCalls;
    long failedCalls;
    long tokensPrefill;
    long tokensDecode;
    long prefillBusyNs;
    long decodeBusyNs;
    long requests;
    long batchesUnread;
    long encodeCalls;
    long encodeTokens;
    final long[] batchSizes = new long[TokenTotals.BATCH_SIZE_BUCKETS];

    /** A call counted by its size alone: one token is a decode step, more a prefill. */
    void record(int nTokens, long durationNs, int status) {
        if (nTokens == 1) {
            record(0, 1, 0, durationNs, status);
        } else {
            record(Math.max(0, nTokens), 0, 0, durationNs, status);
        }
    }

    /** A call whose tokens were told apart: its busy time split between prompt and generated tokens. */
    void record(int prompt, int generated, int firstOutputs, long durationNs, int status) {
        calls++;
        batchSizes[TokenTotals.batchSizeBucket(prompt + generated)]++;
        if (status != 0) {
            failedCalls++;
        }
        if (prompt > 0) {
            prefillCalls++;
        } else if (generated > 0) {
            decodeStepCalls++;
        }
        tokensPrefill += prompt;
        tokensDecode += generated;
        long total = (long) prompt + generated;
        long prefillNs = total == 0 ? 0 : durationNs * prompt / total;
        prefillBusyNs += prefillNs;
        decodeBusyNs += total == 0 ? 0 : durationNs - prefillNs;
        requests += firstOutputs;
    }

    /**
     * An encoder pass: none of the decode figures (its tokens are the encoder's input, neither prompt nor generated
     * tokens of the decoder). {@code nTokens} -1 is a batch whose size the probe could not tell: a call, no tokens.
     */
    void recordEncode(int nTokens) {
        encodeCalls++;
        if (nTokens > 0) {
            encodeTokens += nTokens;
        }
    }

    /** The counts since {@code earlier} ({@link #ZERO} for the run), with the rest of the tick's figures. */
    TokenTotals freezeSince(TokenCounter earlier, int contexts, int activeRequests, List<SequenceStatus> sequences,
                            SpeculativeTotals speculative) {
        List<Long> sizes = new ArrayList<>(batchSizes.length);
        for (int i = 0; i < batchSizes.length; i++) {
            sizes.add(batchSizes[i] - earlier.batchSizes[i]);
        }
        return new TokenTotals(calls - earlier.calls, prefillCalls - earlier.prefillCalls,
                decodeStepCalls - earlier.decodeStepCalls, failedCalls - earlier.failedCalls,
                tokensPrefill - earlier.tokensPrefill, tokensDecode - earlier.tokensDecode,
                prefillBusyNs - earlier.prefillBusyNs, decodeBusyNs - earlier.decodeBusyNs, contexts,
                requests - earlier.requests, activeRequests, batchesUnread - earlier.batchesUnread, sizes, sequences,
                speculative, encodeCalls - earlier.encodeCalls, encodeTokens - earlier.encodeTokens);
    }

    /** Takes the sample the next interval is counted from. */
    void copyFrom(TokenCounter from) {
        calls = from.calls;
        prefillCalls = from.prefillCalls;
        decodeStepCalls = from.decodeStepCalls;
        failedCalls = from.failedCalls;
        tokensPrefill = from.tokensPrefill;
        tokensDecode = from.tokensDecode;
        prefillBusyNs = from.prefillBusyNs;
        decodeBusyNs = from.decodeBusyNs;
        requests = from.requests;
        batchesUnread = from.batchesUnread;
        encodeCalls = from.encodeCalls;
        encodeTokens = from.encodeTokens;
        System.arraycopy(from.batchSizes, 0, batchSizes, 0, batchSizes.length);
    }
}
