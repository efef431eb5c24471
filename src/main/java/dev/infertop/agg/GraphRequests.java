package dev.infertop.agg;

import dev.infertop.model.LatencySummary;

/**
 * Requests from the graphs alone, where the API says nothing of them (llama_decode inlined by LTO into an app,
 * an engine driving ggml's scheduler itself), for a program that computes one sequence at a time, as such an app
 * does. A request is a prompt and the tokens generated after it:
 * <ul>
 * <li>a prompt graph begins one after a generated token, at the run's first graph, or at position 0 (a sequence
 *     starting over, where the graph's positions were read); further prompt graphs are its chunks;
 * <li>its first output is at the end of its last prompt graph: TTFT from its first prompt graph's start (as a
 *     server's {@code prompt_ms} runs from the prompt's first batch to its logits); the request is counted once it
 *     has that output, that is when a generated token follows it or a new request begins;
 * <li>each one-token graph after it computes its next output: a TPOT sample from the output before.
 * </ul>
 * A graph that steps several sequences at once (more than one generated token) cannot be split into requests:
 * from then on the run's requests are unknown ({@link #known()} false), never guessed. Collector thread only.
 */
final class GraphRequests {
    private final IntervalRecorder ttft;
    private final IntervalRecorder tpot;
    private long requests;
    private boolean severalSequences;
    /** A prompt is being read: its graphs so far, from {@link #promptStartNs} to {@link #lastOutputNs}. */
    private boolean inPrompt;
    /** A request has its first output and takes generated tokens. */
    private boolean generating;
    private long promptStartNs;
    private long lastOutputNs;

    GraphRequests(int significantDigits) {
        this.ttft = new IntervalRecorder(significantDigits);
        this.tpot = new IntervalRecorder(significantDigits);
    }

    /**
     * One graph with a token embedding: {@code promptTokens} and {@code generated} by the token rule,
     * {@code firstPosition} -1 where its positions were not read.
     */
    void onGraph(int promptTokens, int generated, int firstPosition, long startNs, long endNs) {
        if (severalSequences) {
            return;
        }
        if (generated > 1) {
            severalSequences = true;
            return;
        }
        if (generated == 0) {
            if (promptTokens <= 0) {
                return;
            }
            if (!inPrompt || firstPosition == 0) {
                endPrompt();
                promptStartNs = startNs;
                inPrompt = true;
                generating = false;
            }
            lastOutputNs = endNs; // the prompt's last graph so far ends with its first output
            return;
        }
        endPrompt();
        if (generating) {
            tpot.recordValue(Math.max(0, endNs - lastOutputNs));
            lastOutputNs = endNs;
        }
    }

    /** The prompt read so far has its first output: its TTFT, and the request counted. */
    private void endPrompt() {
        if (inPrompt) {
            ttft.recordValue(Math.max(0, lastOutputNs - promptStartNs));
            requests++;
            inPrompt = false;
            generating = true;
        }
    }

    /** Whether the graphs tell requests apart (no graph stepped several sequences). */
    boolean known() {
        return !severalSequences;
    }

    /** Requests with their first output so far. */
    long requests() {
        return requests;
    }

    void closeInterval() {
        ttft.closeInterval();
        tpot.closeInterval();
    }

    LatencySummary intervalTtft() {
        return ttft.intervalSummary();
    }

    LatencySummary intervalTpot() {
        return tpot.intervalSummary();
    }

    LatencySummary totalTtft() {
        return ttft.totalSummary();
    }

    LatencySummary totalTpot() {
        return tpot.totalSummary();
    }
}
