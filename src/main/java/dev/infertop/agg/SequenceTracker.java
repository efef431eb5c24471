package dev.infertop.agg;

import dev.infertop.model.Limits;
import dev.infertop.model.SequenceStatus;
import dev.infertop.model.SpeculativeTotals;
import dev.infertop.event.BatchTokens;

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
 * Speculative decoding (a draft model proposes, the target verifies): the draft context decodes a copy of each
 * batch the target decoded, right after it on the same thread (llama.cpp's draft-simple keeps its memory in step
 * that way), so a context whose batch mirrors the one just decoded by another context is a <b>draft</b>: its
 * calls count as draft calls, never as prompt or generated tokens. A target batch of one sequence in which every
 * token asks for output is a <b>verification</b> of the drafts after its first token; how many the target kept
 * is where the sequence goes on: the memory removal that drops the rejected drafts right after
 * ({@link #onSequenceRemove}), or the sequence's next batch. Kept drafts are generated tokens, and the step's
 * time is shared among the tokens it produced for TPOT.
 * Every token is checked against what the batch's arrays must hold (positions from 0 below 2^24, sequence ids
 * below {@link #MAX_SEQUENCES}, logits flags 0 or 1): a batch that does not fit is left to the caller's
 * size-only accounting and counted in {@link #unfitBatches}. One instance per aggregator, collector thread only,
 * no allocation per batch (a sequence's state is made once).
 */
final class SequenceTracker {
    /** Sequence ids accepted (llama.cpp's n_seq_max is at most 256 by default builds' LLAMA_MAX_SEQ). */
    static final int MAX_SEQUENCES = 256;
    /**
     * llama_contexts followed (each holds its sequences' state, ~2 KB and more): the target chooses how many
     * it makes. A batch of a context past the cap is left to the caller's size-only accounting, counted in
     * {@link #contextBatchesUnfollowed}. A process has one or two (a server and its draft model).
     */
    static final int MAX_CONTEXTS = 256;
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
        /** First position of a verification whose kept drafts are not known yet, or -1. */
        int pendingPos = -1;
        int pendingDrafts;
        long pendingStepNs;
    }

    /** One llama_context: its sequences, and whether it is a speculative draft model's. */
    private static final class Context {
        final Sequence[] sequences = new Sequence[MAX_SEQUENCES];
        boolean draft;
    }

    private final Map<Long, Context> contexts = new HashMap<>();

    // The batch decoded last (any context): a draft context's copy of it comes next on the same thread.
    private int lastBatchTid = -1;
    private long lastBatchContext;
    private int lastBatchTokens;
    private long lastBatchFirstToken;
    private long lastBatchLastToken;

    // Speculative decoding, counted since the start (the aggregator derives intervals).
    long verifySteps;
    long draftTokens;
    long acceptedTokens;
    long unresolvedSteps;
    long draftCalls;
    long draftTokensDecoded;
    final long[] acceptedByPosition = new long[SpeculativeTotals.MAX_POSITIONS];

    /** Generated tokens known since the last take: drafts the target kept, told after their step. */
    private long keptDrafts;

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
    /** The batch was a draft context's: none of the above counts as the engine's tokens. */
    boolean draftBatch;

    /**
     * The batch was a decode step: one generated token of each of its sequences, no prompt, no draft check. Then
     * {@link #stepContextPositions} is the sum of their context lengths (each token's position + 1): the KV cells
     * the step's attention reads.
     */
    boolean decodeStep;
    long stepContextPositions;
    /**
     * Of the batch, in any batch (a decode step, or one beside a prompt): generated tokens decoded one per
     * sequence, and their context lengths summed.
     */
    int positionedTokens;
    long positionedContextPositions;

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
    boolean onBatch(int tid, long startNs, long endNs, long context, int nTokens, BatchTokens batch) {
        int recorded = batch.count();
        promptTokens = 0;
        generatedTokens = 0;
        firstOutputs = 0;
        draftBatch = false;
        decodeStep = false;
        stepContextPositions = 0;
        positionedTokens = 0;
        positionedContextPositions = 0;
        if (recorded <= 0 || recorded != nTokens || !group(batch)) {
            unfitBatches++;
            clearGroups();
            lastBatchTid = -1;
            return false;
        }
        Context owner = contextOf(context);
        if (owner == null) {
            contextBatchesUnfollowed++;
            clearGroups();
            lastBatchTid = -1;
            return false;
        }
        long firstToken = tokenKey(batch, 0);
        long lastToken = tokenKey(batch, recorded - 1);
        if (!owner.draft && tid == lastBatchTid && context != lastBatchContext && recorded == lastBatchTokens
                && firstToken == lastBatchFirstToken && lastToken == lastBatchLastToken
                && !contextOf(lastBatchContext).draft) {
            owner.draft = true; // a copy of the batch another context just decoded: a draft model keeping step
        }
        lastBatchTid = tid;
        lastBatchContext = context;
        lastBatchTokens = recorded;
        lastBatchFirstToken = firstToken;
        lastBatchLastToken = lastToken;
        if (owner.draft) {
            draftBatch = true;
            draftCalls++;
            draftTokensDecoded += recorded;
            clearGroups();
            return true;
        }
        Sequence[] sequences = owner.sequences;
        boolean step = touchedCount > 0;
        long contextPositions = 0;
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
            if (s.pendingPos >= 0) {
                resolve(s, groupFirstPos[seq]); // the previous verification's kept drafts: where this goes on
            }
            boolean rewound = s.started && groupFirstPos[seq] >= 0 && groupFirstPos[seq] <= s.lastPos;
            if (s.started && s.generating && !rewound && tokens == 1 && groupFirstPos[seq] >= 0) {
                contextPositions += groupFirstPos[seq] + 1L;
                positionedTokens++;
                positionedContextPositions += groupFirstPos[seq] + 1L;
            } else {
                step = false;
            }
            if (!s.started || (rewound && !verification) || (s.generating && promptLike)) {
                s.started = true;
                s.generating = false;
                s.requestStartNs = startNs;
                s.promptTokens = s.generatedTokens = s.ttftNs = s.lastTpotNs = 0;
            }
            if (!s.generating) {
                // The prompt, or a chunk of it: its tokens up to the first output; the rest are generated.
                int prompt = outputs == 0 ? tokens : lastOutputIndexOfFirst(seq, batch);
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
            } else if (verification && groupFirstPos[seq] >= 0) {
                // The token sampled last is kept for sure; how many drafts after it were is told later.
                verifySteps++;
                draftTokens += tokens - 1;
                generatedTokens += 1;
                s.generatedTokens += 1;
                s.pendingPos = groupFirstPos[seq];
                s.pendingDrafts = tokens - 1;
                s.pendingStepNs = Math.max(0, endNs - s.lastOutputEndNs);
                s.lastOutputEndNs = endNs;
                s.lastPos = groupFirstPos[seq];
                s.lastActiveNs = endNs;
                continue;
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
        decodeStep = step;
        stepContextPositions = step ? contextPositions : 0;
        clearGroups();
        return true;
    }

    // The context of the last batch: a process has one or two, so a batch rarely boxes a key for the map.
    private long lastContext;
    private Context lastContextState;

    /** The context's state, made now if it is new; null when it is new and {@link #MAX_CONTEXTS} are kept. */
    private Context contextOf(long context) {
        if (lastContextState == null || context != lastContext) {
            Context state = contexts.get(context);
            if (state == null) {
                if (contexts.size() >= MAX_CONTEXTS) {
                    return null;
                }
                state = new Context();
                contexts.put(context, state);
            }
            lastContextState = state;
            lastContext = context;
        }
        return lastContextState;
    }

    /** Batches of a context past {@link #MAX_CONTEXTS}: counted by their size, not per sequence. */
    long contextBatchesUnfollowed;

    /** This table in the snapshot's limits. */
    Limits.Bound bound() {
        return Limits.Bound.of("contexts", contexts.size(), "contexts_cap", MAX_CONTEXTS,
                Limits.Past.capped("context_batches_unfollowed", contextBatchesUnfollowed));
    }

    /** A token's position and sequence in one long, to compare batches. */
    private static long tokenKey(BatchTokens batch, int i) {
        return ((long) batch.position(i) << 32) | (batch.sequence(i) & 0xffffffffL);
    }

    /**
     * Positions from {@code p0} on removed from sequence {@code seq}'s memory: right after a verification, the
     * server drops the drafts the target rejected, so {@code p0} is where the sequence goes on. Only a removal
     * to the end ({@code p1 < 0}) that lands within the verified positions tells it; any other is ignored.
     */
    void onSequenceRemove(int seq, int p0, int p1) {
        if (seq < 0 || seq >= MAX_SEQUENCES || p1 >= 0) {
            return;
        }
        for (Context context : contexts.values()) {
            Sequence s = context.draft ? null : context.sequences[seq];
            if (s != null && s.pendingPos >= 0 && p0 > s.pendingPos && p0 <= s.pendingPos + s.pendingDrafts + 1) {
                resolve(s, p0);
                return;
            }
        }
    }

    /**
     * Settles a verification at {@code s.pendingPos} by the position its sequence goes on from: the drafts
     * kept are those before it. Anywhere else (a new request, a rewind) leaves the step unresolved.
     */
    private void resolve(Sequence s, int nextPos) {
        int kept = nextPos - s.pendingPos - 1;
        if (nextPos < 0 || kept < 0 || kept > s.pendingDrafts) {
            unresolvedSteps++;
        } else {
            acceptedTokens += kept;
            for (int i = 0; i < kept && i < acceptedByPosition.length; i++) {
                acceptedByPosition[i]++;
            }
            keptDrafts += kept;
            s.generatedTokens += kept;
            s.lastPos = s.pendingPos + kept;
            // The step produced kept + 1 tokens: each gets an equal share of its time (the server's own TPOT is
            // generation time over generated tokens).
            s.lastTpotNs = s.pendingStepNs / (kept + 1);
            for (int i = 0; i <= kept; i++) {
                tpot.recordValue(s.lastTpotNs);
            }
        }
        s.pendingPos = -1;
    }

    /** Generated tokens told since the last call (kept drafts): the caller adds them to its token counts. */
    long takeKeptDrafts() {
        long kept = keptDrafts;
        keptDrafts = 0;
        return kept;
    }

    /** The speculative figures since the start. */
    SpeculativeTotals speculativeTotals() {
        java.util.List<Long> positions = new java.util.ArrayList<>();
        int last = acceptedByPosition.length;
        while (last > 0 && acceptedByPosition[last - 1] == 0) {
            last--;
        }
        for (int i = 0; i < last; i++) {
            positions.add(acceptedByPosition[i]);
        }
        return new SpeculativeTotals(verifySteps, draftTokens, acceptedTokens, unresolvedSteps,
                draftCalls, draftTokensDecoded, positions);
    }

    /** Sequences of any context that decoded a token since {@code sinceNs}. */
    int activeSince(long sinceNs) {
        int active = 0;
        for (Context context : contexts.values()) {
            if (context.draft) {
                continue;
            }
            for (Sequence s : context.sequences) {
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
    java.util.List<SequenceStatus> statuses(long nowNs, long recentNs) {
        java.util.List<SequenceStatus> statuses = new java.util.ArrayList<>();
        java.util.List<Long> order = new java.util.ArrayList<>(contexts.keySet());
        java.util.Collections.sort(order);
        for (long context : order) {
            Context state = contexts.get(context);
            if (state.draft) {
                continue;
            }
            Sequence[] sequences = state.sequences;
            for (int seq = 0; seq < sequences.length && statuses.size() < MAX_STATUSES; seq++) {
                Sequence s = sequences[seq];
                if (s != null && s.started && nowNs - s.lastActiveNs <= recentNs) {
                    statuses.add(new SequenceStatus(context, seq, s.generating, s.promptTokens,
                            s.generatedTokens, s.ttftNs, s.lastTpotNs, Math.max(0, nowNs - s.lastActiveNs)));
                }
            }
        }
        return statuses;
    }

    /** Fills the per-sequence groups; false when a token does not fit the batch layout. */
    private boolean group(BatchTokens batch) {
        int recorded = batch.count();
        for (int i = 0; i < recorded; i++) {
            int pos = batch.position(i);
            int seq = batch.sequence(i);
            byte logits = batch.logits(i);
            byte nSeq = batch.sequenceCount(i);
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
    private static int lastOutputIndexOfFirst(int seq, BatchTokens batch) {
        int recorded = batch.count();
        int count = 0;
        for (int i = 0; i < recorded; i++) {
            int tokenSeq = batch.sequence(i);
            if ((tokenSeq == -1 ? 0 : tokenSeq) != seq) {
                continue;
            }
            count++;
            byte logits = batch.logits(i);
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
