package dev.infertop.agg;

import dev.infertop.io.ConfigFiles;
import dev.infertop.json.JsonLinesView;
import dev.infertop.event.BatchTokens;
import dev.infertop.model.BackendNames;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.TokenTotals;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Batches as a server sends them, token by token, through the aggregator: prompt and generated tokens per
 * sequence, requests, per-request TTFT and TPOT, busy time split by tokens, and batches that do not fit.
 */
class SequenceTrackerTest {
    private static final long CTX = 0x5000;
    private final TraceAggregator aggregator = Routers.of(ConfigFiles.backendNames(), null);
    private long clockNs = 1_000_000_000L;

    /** One token: sequence, position, whether it asks for output (-1: no such array). */
    private record Tok(int seq, int pos, int logits) {}

    private static Tok t(int seq, int pos, boolean logits) {
        return new Tok(seq, pos, logits ? 1 : 0);
    }

    /** A llama_decode call of {@code durationNs} whose batch holds {@code tokens}. */
    private void call(long durationNs, Tok... tokens) {
        call(CTX, durationNs, tokens);
    }

    /** The same, on context {@code context}. */
    private void call(long context, long durationNs, Tok... tokens) {
        BatchTokens.Builder batch = BatchTokens.builder(tokens.length);
        for (Tok token : tokens) {
            batch.add(token.pos(), token.seq(), token.logits(), 1);
        }
        long start = clockNs;
        long end = start + durationNs;
        Routers.tokens(aggregator).onBatch(7, start, end, context, tokens.length, batch.build());
        Routers.tokens(aggregator).onDecode(7, start, end, context, tokens.length, 0);
        clockNs = end + 1_000_000; // 1 ms of the server's own work between calls
    }

    private Snapshot snapshot() {
        return aggregator.snapshot(clockNs, RunState.RUNNING, new TargetInfo(1, "llama-server", null, List.of()), 0,
                List.<LayerStatus>of());
    }

    @Test
    void aServerStepOfSeveralSlotsIsDecodeNotAPrompt() {
        aggregator.start(clockNs);
        // Two requests' prompts in one batch: 5 tokens of slot 0, 3 of slot 1, each ending with an output.
        call(4_000_000, t(0, 0, false), t(0, 1, false), t(0, 2, false), t(0, 3, false), t(0, 4, true),
                t(1, 0, false), t(1, 1, false), t(1, 2, true));
        // Two steps of both slots: one generated token each.
        call(2_000_000, t(0, 5, true), t(1, 3, true));
        call(2_000_000, t(0, 6, true), t(1, 4, true));
        Snapshot s = snapshot();
        TokenTotals tokens = s.total().tokens();
        assertEquals(3, tokens.decodeCalls());
        assertEquals(1, tokens.prefillCalls());
        assertEquals(2, tokens.decodeStepCalls());
        assertEquals(8, tokens.tokensPrefill());
        assertEquals(4, tokens.tokensDecode());
        assertEquals(2, tokens.requests());
        assertEquals(2, tokens.activeRequests());
        assertEquals(4_000_000, tokens.prefillBusyNs());
        assertEquals(4_000_000, tokens.decodeBusyNs());
        assertEquals(1000.0, tokens.decodeTokensPerSecond(), 1e-9, "4 tokens in 4 ms of decode calls");
        // TTFT: the prompt call's 4 ms for both; TPOT: 1 ms between calls + the 2 ms step, per request.
        assertEquals(2, s.total().ttft().count());
        assertEquals(4.0, s.total().ttft().p50Ms(), 0.01);
        assertEquals(4, s.total().tpot().count());
        assertEquals(3.0, s.total().tpot().p50Ms(), 0.01);
        var json = JsonLinesView.toJsonNode(s, true);
        assertEquals("{\"2\":2,\"5-8\":1}", json.path("batch_sizes").toString(), "calls by tokens per call");
        assertEquals(2, json.path("requests").path("count").asLong());
        assertEquals(2 + 4, json.path("requests").path("generated_tokens").asLong(), "first outputs + decoded");
        assertEquals(2, s.interval().tokens().sequences().size());
        assertEquals(List.of(5L, 3L), s.interval().tokens().sequences().stream().map(q -> q.promptTokens()).toList());
        assertEquals(List.of(2L, 2L), s.interval().tokens().sequences().stream().map(q -> q.generatedTokens()).toList());
    }

    @Test
    void aMixedBatchSplitsItsTimeAndARewoundSlotStartsANewRequest() {
        aggregator.start(clockNs);
        call(1_000_000, t(0, 0, false), t(0, 1, true));
        call(1_000_000, t(0, 2, true));
        // Slot 0 reused from position 0 (a new request) while slot 1's prompt is still absent: 3 prompt
        // tokens and, in the same call, slot 2's step... here a second sequence's generated token.
        call(1_000_000, t(1, 0, true));
        call(4_000_000, t(0, 0, false), t(0, 1, false), t(0, 2, true), t(1, 1, true));
        Snapshot s = snapshot();
        TokenTotals tokens = s.total().tokens();
        assertEquals(2 + 1 + 3, tokens.tokensPrefill());
        assertEquals(1 + 1, tokens.tokensDecode());
        assertEquals(3, tokens.requests(), "slot 0 twice, slot 1 once");
        assertEquals(3_000_000 + 2_000_000, tokens.prefillBusyNs(), "3 of the last call's 4 tokens were prompt");
        assertEquals(1_000_000 + 1_000_000, tokens.decodeBusyNs());
    }

    @Test
    void aNewTurnAppendedToAGeneratingSequenceIsANewRequest() {
        aggregator.start(clockNs);
        call(1_000_000, t(0, 0, false), t(0, 1, true));
        call(1_000_000, t(0, 2, true));
        call(1_000_000, t(0, 3, false), t(0, 4, false), t(0, 5, true)); // the user's next message, same sequence
        TokenTotals tokens = snapshot().total().tokens();
        assertEquals(5, tokens.tokensPrefill());
        assertEquals(1, tokens.tokensDecode());
        assertEquals(2, tokens.requests());
    }

    @Test
    void aBatchThatDoesNotFitIsCountedBySizeAndSaidSo() {
        aggregator.start(clockNs);
        call(1_000_000, new Tok(0, 0, 0), new Tok(0, 1, 7)); // a logits flag of 7: not llama_batch's layout
        TokenTotals tokens = snapshot().total().tokens();
        assertEquals(1, tokens.batchesUnread());
        assertEquals(2, tokens.tokensPrefill(), "two tokens in one call: prefill, as without batches");
        assertEquals(0, tokens.requests());
    }

    private static final long DRAFT = 0x6000;

    /** Tokens of sequence 0 at positions from..to, each asking for output ({@code logits} 1) or none (-1). */
    private static Tok[] run(int from, int to, int logits) {
        Tok[] tokens = new Tok[to - from + 1];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = new Tok(0, from + i, logits);
        }
        return tokens;
    }

    /** The draft model's copy of the target's batch (draft-simple: same tokens, no logits array). */
    private void mirror(Tok... target) {
        Tok[] copy = new Tok[target.length];
        for (int i = 0; i < target.length; i++) {
            copy[i] = new Tok(target[i].seq(), target[i].pos(), -1);
        }
        call(DRAFT, 500_000, copy);
    }

    /**
     * llama-server with a draft model, one request: the target decodes the prompt, the draft context a copy of
     * it; each step the draft proposes 3 tokens (one call each), the target verifies the last sampled token and
     * the 3 drafts in one batch, the draft copies that batch, and the server drops the rejected drafts.
     */
    @Test
    void aDraftContextIsToldApartAndVerificationsCountTheDraftsKept() {
        aggregator.start(clockNs);
        Tok[] prompt = {t(0, 0, false), t(0, 1, false), t(0, 2, false), t(0, 3, false), t(0, 4, true)};
        call(4_000_000, prompt);
        mirror(prompt);
        for (int pos = 5; pos <= 7; pos++) {
            call(DRAFT, 200_000, t(0, pos, true)); // drafting
        }
        Tok[] verify = run(5, 8, 1);
        call(3_000_000, verify);
        mirror(verify);
        Routers.tokens(aggregator).onSequenceRemove(7, clockNs, 0xabc, 0, 9, -1); // all 3 drafts kept: goes on at 9
        Routers.tokens(aggregator).onSequenceRemove(7, clockNs, 0xdef, 0, 9, -1); // the draft's memory: nothing more to tell
        for (int pos = 9; pos <= 11; pos++) {
            call(DRAFT, 200_000, t(0, pos, true));
        }
        verify = run(9, 12, 1);
        call(3_000_000, verify);
        mirror(verify);
        Routers.tokens(aggregator).onSequenceRemove(7, clockNs, 0xabc, 0, 10, -1); // none kept
        Snapshot s = snapshot();
        TokenTotals tokens = s.total().tokens();
        var spec = tokens.speculative();
        assertEquals(3, tokens.decodeCalls(), "the target's calls only: the prompt and two verifications");
        assertEquals(5, tokens.tokensPrefill());
        assertEquals(1, tokens.requests());
        assertEquals(2, spec.verifySteps());
        assertEquals(6, spec.draftTokens());
        assertEquals(3, spec.acceptedTokens());
        assertEquals(0.5, spec.acceptanceRate(), 1e-9);
        assertEquals(List.of(1L, 1L, 1L), spec.acceptedByPosition());
        assertEquals(0, spec.unresolvedSteps());
        assertEquals(9, spec.draftCalls(), "3 copies of the target's batches + 6 drafting calls");
        assertEquals(5 + 3 + 4 + 3 + 4, spec.draftTokensDecoded());
        // Generated tokens kept: the sampled token and 3 drafts, then the sampled token alone.
        assertEquals(5, tokens.tokensDecode());
        assertEquals(1, s.total().ttft().count());
        // TPOT: the first step made 4 tokens, the second 1: one sample per token.
        assertEquals(5, s.total().tpot().count());
    }

    /** Without a probed seq_rm, a verification is settled by where its sequence goes on, or left unresolved. */
    @Test
    void aVerificationIsSettledByTheNextBatchOrLeftUnresolved() {
        aggregator.start(clockNs);
        call(2_000_000, t(0, 0, false), t(0, 1, true));
        call(2_000_000, run(2, 5, 1)); // verifies 3 drafts
        call(2_000_000, run(4, 7, 1)); // goes on at 4: 1 draft kept
        call(2_000_000, t(0, 0, false), t(0, 1, true)); // a new request: the last verification is unknown
        TokenTotals tokens = snapshot().total().tokens();
        var spec = tokens.speculative();
        assertEquals(2, spec.verifySteps());
        assertEquals(6, spec.draftTokens());
        assertEquals(1, spec.acceptedTokens());
        assertEquals(1, spec.unresolvedSteps());
        assertEquals(2, tokens.requests(), "the kept draft's position is no rewind; the new prompt is");
        assertEquals(0, spec.draftCalls());
        assertEquals(1 + 1 + 1, tokens.tokensDecode(), "two sampled tokens and one kept draft");
    }

    /** Two contexts decoding different batches (two models of one app) are both counted: no copy, no draft. */
    @Test
    void twoContextsWithDifferentBatchesAreBothCounted() {
        aggregator.start(clockNs);
        call(2_000_000, t(0, 0, false), t(0, 1, true));
        call(DRAFT, 2_000_000, t(0, 0, false), t(0, 1, false), t(0, 2, true));
        call(1_000_000, t(0, 2, true));
        call(DRAFT, 1_000_000, t(0, 3, true));
        TokenTotals tokens = snapshot().total().tokens();
        assertEquals(4, tokens.decodeCalls());
        assertEquals(5, tokens.tokensPrefill());
        assertEquals(2, tokens.tokensDecode());
        assertEquals(2, tokens.requests());
        assertEquals(0, tokens.speculative().draftCalls());
    }

    /**
     * A step of two generating slots at positions 5 and 3 reads 6 + 4 = 10 context positions; a batch that mixes a
     * new prompt with a generated token is no decode step, nor is the prompt itself.
     */
    @Test
    void aDecodeStepSaysItsSequencesContextLengths() {
        aggregator.start(clockNs);
        SequenceTracker tracker = Routers.sequences(aggregator);
        call(4_000_000, t(0, 0, false), t(0, 1, false), t(0, 2, false), t(0, 3, false), t(0, 4, true),
                t(1, 0, false), t(1, 1, false), t(1, 2, true));
        assertEquals(false, tracker.decodeStep, "a prompt batch");
        call(2_000_000, t(0, 5, true), t(1, 3, true));
        assertEquals(true, tracker.decodeStep);
        assertEquals(10, tracker.stepContextPositions);
        call(2_000_000, t(0, 6, true), t(2, 0, false), t(2, 1, true));
        assertEquals(false, tracker.decodeStep, "a step beside a new prompt");
        assertEquals(0, tracker.stepContextPositions);
    }
}
