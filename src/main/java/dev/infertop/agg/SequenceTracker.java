package dev.infertop.agg;

import dev.infertop.event.EventLayout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;

/**
 * Token accounting per sequence, from the batches llama_decode takes: a llama-server step decodes one token of
 * each busy slot in one batch, so a batch of several tokens is not a prompt, and its size says nothing. Each
 * token carries its sequence, its position and whether llama.cpp must produce its output (logits):
 * <ul>
 *   <li>a sequence's <b>prompt</b> runs from its first token after a start (a new sequence, its position
 *       reset or rewound, or a new turn appended: several tokens of which only the last asks for output) up to
 *       and including the first token that asks for output; its end gives the request's first token;</li>
 *   <li>after that each token of the sequence is a <b>generated</b> token being decoded, and its output is the
 *       next token: TPOT is the time between a request's outputs;</li>
 *   <li>a <b>request</b> is a sequence's life from its prompt until the next start; TTFT runs from the start of
 *       the decode call holding its first prompt token to the end of the call that produced its first output.</li>
 * </ul>
 * Every token is checked against what the batch's arrays must hold (positions from 0 below 2^24, sequence ids
 * below {@link #MAX_SEQUENCES}, logits flags 0 or 1): a batch that does not fit is left to the caller's
 * size-only accounting and counted in {@link #unfitBatches}. One instance per aggregator, collector thread only,
 * no allocation per batch (a sequence's state is made once).
 */
final class SequenceTracker {
    /** Sequence ids accepted (llama.cpp's n_seq_max is at most 256 by default builds' LLAMA_MAX_SEQ). */
    static final int MAX_SEQUENCES = 256;
    private static final int MAX_POSITION = 1 << 24;

    /** One sequence of one llama_context. */
    private static final class Sequence {
        long promptTokens;
        long generatedTokens;
        long ttftNs;
        long lastTpotNs;
        boolean started;
        boolean generating;
        int lastPos = -1;
        long requestStartNs;
        long lastOutputEndNs;
        long lastActiveNs;
    }

    private final Map<Long, Sequence[]> contexts = new HashMap<>();

    // Per-call scratch, indexed by sequence id: this batch's tokens of each sequence.
    private final int[] groupTokens = new int[MAX_SEQUENCES];
    private final int[] groupOutputs = new int[MAX_SEQUENCES];
    private final int[] groupFirstPos = new int[MAX_SEQUENCES];
    private final int[] touched = new int[MAX_SEQUENCES];
    private int touchedCount;

    // What the last batch read held (valid until the next onBatch).
    int promptTokens;
    int generatedTokens;
    /** Requests whose first output this batch produced. */
    int firstOutputs;

    /** Batches that did not fit the layout (counted by their size instead). */
    long unfitBatches;

    private final IntervalRecorder ttft;
    private final IntervalRecorder tpot;

    SequenceTracker(IntervalRecorder ttft, IntervalRecorder tpot) {
        this.ttft = ttft;
        this.tpot = tpot;
    }

    /**
     * Accounts one batch; false when it does not fit (nothing recorded: the caller counts it by its size).
     * On true, {@link #promptTokens} and {@link #generatedTokens} say what it held.
     */
    boolean onBatch(long startNs, long endNs, long context, int nTokens, int recorded, MemorySegment data,
                    long offset) {
        promptTokens = 0;
        generatedTokens = 0;
        firstOutputs = 0;
        if (recorded <= 0 || recorded != nTokens || !group(recorded, data, offset)) {
            unfitBatches++;
            clearGroups();
            return false;
        }
        Sequence[] sequences = sequencesOf(context);
        for (int t = 0; t < touchedCount; t++) {
            int seq = touched[t];
            Sequence s = sequences[seq];
            if (s == null) {
                s = sequences[seq] = new Sequence();
            }
            int tokens = groupTokens[seq];
            int outputs = groupOutputs[seq];
            boolean verification = tokens > 1 && outputs == tokens; // a speculative draft checked by the target
            boolean promptLike = tokens > 1 && outputs <= 1;
            boolean rewound = s.started && groupFirstPos[seq] >= 0 && groupFirstPos[seq] <= s.lastPos;
            if (!s.started || (rewound && !verification) || (s.generating && promptLike)) {
                s.started = true;
                s.generating = false;
                s.requestStartNs = startNs;
                s.promptTokens = s.generatedTokens = s.ttftNs = s.lastTpotNs = 0;
            }
            if (!s.generating) {
                // The prompt, or a chunk of it: its tokens up to the first output; the rest are generated.
                int prompt = outputs == 0 ? tokens : lastOutputIndexOfFirst(seq, data, offset, recorded);
                promptTokens += prompt;
                generatedTokens += tokens - prompt;
                s.promptTokens += prompt;
                s.generatedTokens += tokens - prompt;
                if (outputs > 0) {
                    s.generating = true;
                    s.ttftNs = Math.max(0, endNs - s.requestStartNs);
                    ttft.recordValue(s.ttftNs);
                    s.lastOutputEndNs = endNs;
                    firstOutputs++;
                }
            } else {
                generatedTokens += tokens;
                s.generatedTokens += tokens;
                if (outputs > 0) {
                    s.lastTpotNs = Math.max(0, endNs - s.lastOutputEndNs);
                    tpot.recordValue(s.lastTpotNs);
                    s.lastOutputEndNs = endNs;
                }
            }
            s.lastPos = groupFirstPos[seq] < 0 ? s.lastPos + tokens : groupFirstPos[seq] + tokens - 1;
            s.lastActiveNs = endNs;
        }
        clearGroups();
        return true;
    }

    // The context of the last batch: a process has one or two, so a batch rarely boxes a key for the map.
    private long lastContext;
    private Sequence[] lastSequences;

    private Sequence[] sequencesOf(long context) {
        if (lastSequences == null || context != lastContext) {
            lastSequences = contexts.computeIfAbsent(context, c -> new Sequence[MAX_SEQUENCES]);
            lastContext = context;
        }
        return lastSequences;
    }

    /** Sequences of any context that decoded a token since {@code sinceNs}. */
    int activeSince(long sinceNs) {
        int active = 0;
        for (Sequence[] sequences : contexts.values()) {
            for (Sequence s : sequences) {
                if (s != null && s.started && s.lastActiveNs >= sinceNs) {
                    active++;
                }
            }
        }
        return active;
    }

    /** Sequences shown in the requests panel at most. */
    static final int MAX_STATUSES = 64;

    /**
     * The sequences that decoded a token in the last {@code recentNs} before {@code nowNs}, by context and id
     * (a few objects per tick, only while a server is traced).
     */
    java.util.List<dev.infertop.model.SequenceStatus> statuses(long nowNs, long recentNs) {
        java.util.List<dev.infertop.model.SequenceStatus> statuses = new java.util.ArrayList<>();
        java.util.List<Long> order = new java.util.ArrayList<>(contexts.keySet());
        java.util.Collections.sort(order);
        for (long context : order) {
            Sequence[] sequences = contexts.get(context);
            for (int seq = 0; seq < sequences.length && statuses.size() < MAX_STATUSES; seq++) {
                Sequence s = sequences[seq];
                if (s != null && s.started && nowNs - s.lastActiveNs <= recentNs) {
                    statuses.add(new dev.infertop.model.SequenceStatus(context, seq, s.generating, s.promptTokens,
                            s.generatedTokens, s.ttftNs, s.lastTpotNs, Math.max(0, nowNs - s.lastActiveNs)));
                }
            }
        }
        return statuses;
    }

    /** Fills the per-sequence groups; false when a token does not fit the batch layout. */
    private boolean group(int recorded, MemorySegment data, long offset) {
        for (int i = 0; i < recorded; i++) {
            long token = offset + (long) i * EventLayout.BATCH_TOKEN_SIZE;
            int pos = data.get(ValueLayout.JAVA_INT_UNALIGNED, token + EventLayout.BATCH_TOKEN_POS);
            int seq = data.get(ValueLayout.JAVA_INT_UNALIGNED, token + EventLayout.BATCH_TOKEN_SEQ);
            byte logits = data.get(ValueLayout.JAVA_BYTE, token + EventLayout.BATCH_TOKEN_LOGITS);
            byte nSeq = data.get(ValueLayout.JAVA_BYTE, token + EventLayout.BATCH_TOKEN_N_SEQ);
            if (seq == -1) {
                seq = 0; // no seq_id array: llama.cpp puts every token in sequence 0
            }
            if (seq < 0 || seq >= MAX_SEQUENCES || pos < -1 || pos >= MAX_POSITION || logits < -1 || logits > 1
                    || nSeq < 1) {
                return false;
            }
            boolean output = logits == 1 || (logits == -1 && i == recorded - 1); // no array: the last token only
            if (groupTokens[seq] == 0) {
                touched[touchedCount++] = seq;
                groupFirstPos[seq] = pos;
            } else if (pos >= 0 && groupFirstPos[seq] >= 0 && pos < groupFirstPos[seq]) {
                return false; // positions of one sequence go up within a batch
            }
            groupTokens[seq]++;
            if (output) {
                groupOutputs[seq]++;
            }
        }
        return true;
    }

    /** How many of sequence {@code seq}'s tokens in the batch come up to and including its first output. */
    private static int lastOutputIndexOfFirst(int seq, MemorySegment data, long offset, int recorded) {
        int count = 0;
        for (int i = 0; i < recorded; i++) {
            long token = offset + (long) i * EventLayout.BATCH_TOKEN_SIZE;
            int tokenSeq = data.get(ValueLayout.JAVA_INT_UNALIGNED, token + EventLayout.BATCH_TOKEN_SEQ);
            if ((tokenSeq == -1 ? 0 : tokenSeq) != seq) {
                continue;
            }
            count++;
            byte logits = data.get(ValueLayout.JAVA_BYTE, token + EventLayout.BATCH_TOKEN_LOGITS);
            if (logits == 1 || (logits == -1 && i == recorded - 1)) {
                return count;
            }
        }
        return count;
    }

    private void clearGroups() {
        for (int t = 0; t < touchedCount; t++) {
            int seq = touched[t];
            groupTokens[seq] = 0;
            groupOutputs[seq] = 0;
        }
        touchedCount = 0;
    }
}
