package dev.infertop.agg;

import dev.infertop.model.GraphTokenCounts;
import dev.infertop.event.EventLayout;
import dev.infertop.event.GraphTokensRecord;
import dev.infertop.model.BackendNames;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.model.TokenSource;
import dev.infertop.model.TokenTotals;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The token layer's two sources and the one rule for a generated token, with exact counts. */
class TokenAggregatorTest {
    private static final long MS = 1_000_000L;
    private static final TargetInfo TARGET = new TargetInfo(1, "engine", null, List.of());

    private final TraceAggregator aggregator = Routers.of(BackendNames.parse(""), null);
    private final TokenAggregator tokens = Routers.tokens(aggregator);
    private final GraphTokensRecord graph = new GraphTokensRecord();

    /** A decode graph of {@code n} tokens from {@code firstPosition}, {@code outputs} rows of logits. */
    private void graph(int tid, long startNs, long endNs, int n, int firstPosition, int outputs) {
        tokens.onGraphTokens(graph.set(tid, startNs, endNs, 0x1000, n, outputs, n, firstPosition,
                firstPosition + n - 1, 64, 1, EventLayout.GRAPH_LEVEL_SCHED, EventLayout.GRAPH_TOKENS_POSITIONS, 0));
    }

    private Snapshot snapshot(long nowNs) {
        return aggregator.snapshot(nowNs, RunState.RUNNING, TARGET, 0, List.of());
    }

    @Test
    void theRuleForAGeneratedToken() {
        assertEquals(1, TokenAggregator.generatedOf(1, -1, -1), "one token, position unknown: a step");
        assertEquals(1, TokenAggregator.generatedOf(1, 1, 7), "one token past position 0: a step");
        assertEquals(0, TokenAggregator.generatedOf(1, 1, 0), "one token at position 0: a sequence's prompt");
        assertEquals(0, TokenAggregator.generatedOf(16, 1, 0), "a prompt chunk, its last token's output");
        assertEquals(0, TokenAggregator.generatedOf(16, -1, -1), "a prompt chunk, outputs unknown");
        assertEquals(4, TokenAggregator.generatedOf(4, 4, 30), "four sequences' steps in one batch");
        assertEquals(3, TokenAggregator.generatedOf(10, 4, 0), "three steps beside a prompt chunk's end");
    }

    /**
     * No API call, graphs with a token embedding: the figures are the graphs', and the source says so. Two
     * sequences of a 16-token prompt then 8 one-token steps.
     */
    @Test
    void withoutApiCallsTheTokensAreTheGraphs() {
        aggregator.start(0);
        long t = 0;
        for (int sequence = 0; sequence < 2; sequence++) {
            graph(7, t, t + 10 * MS, 16, 0, 1);
            t += 20 * MS;
            for (int step = 0; step < 8; step++) {
                graph(7, t, t + 2 * MS, 1, 16 + step, 1);
                t += 5 * MS;
            }
        }
        Snapshot s = snapshot(1000 * MS);
        TokenTotals total = s.total().tokens();
        assertEquals(TokenSource.GRAPHS, total.source());
        assertEquals("llama_decode is not called: inlined or not used; tokens from the graphs",
                total.source().state());
        assertEquals(32, total.tokensPrefill());
        assertEquals(16, total.tokensDecode());
        assertEquals(18, total.decodeCalls());
        assertEquals(20 * MS, total.prefillBusyNs());
        assertEquals(32 * MS, total.decodeBusyNs());
        assertEquals(500.0, total.decodeTokensPerSecond(), 1e-9);
        assertEquals(2, s.total().ttft().count());
        assertEquals(16, s.total().tpot().count());
        GraphTokenCounts graphs = total.fromGraphs();
        assertEquals(new GraphTokenCounts(18, 32, 16, 18, 0), new GraphTokenCounts(
                graphs.graphs(), graphs.promptTokens(), graphs.generatedTokens(), graphs.positionsRead(),
                graphs.encoderPasses()));
        // Requests, one sequence at a time: TTFT each prompt's 10 ms; TPOT from the prompt's end to the first step's
        // end (12 ms), then 5 ms a step.
        assertEquals(2, graphs.requests());
        assertEquals(2, graphs.requestTtft().count());
        assertEquals(10, graphs.requestTtft().meanMs(), 0.05);
        assertEquals(16, graphs.requestTpot().count());
        assertEquals((12 + 7 * 5) / 8.0, graphs.requestTpot().meanMs(), 0.05);
        assertEquals(total.fromGraphs(), s.interval().tokens().fromGraphs(), "the first interval is the run");
        assertEquals(0, snapshot(2000 * MS).interval().tokens().fromGraphs().graphs(), "nothing in the next");
    }

    /**
     * llama_batch_get_one's calls carry no positions: the graph each one computed does. A one-token call whose
     * graph is at position 0 starts a sequence (its token is the prompt), as llama_process's batches say; and the
     * graphs' own figures equal the API's.
     */
    @Test
    void aOneTokenCallAtPositionZeroIsAPromptToken() {
        aggregator.start(0);
        long t = 0;
        for (int position = 0; position < 4; position++) {
            graph(7, t + MS, t + 2 * MS, 1, position, 1);
            tokens.onDecode(7, t, t + 3 * MS, 0x5000, 1, 0);
            t += 10 * MS;
        }
        TokenTotals total = snapshot(1000 * MS).total().tokens();
        assertEquals(TokenSource.API, total.source());
        assertEquals(1, total.tokensPrefill());
        assertEquals(3, total.tokensDecode());
        assertEquals(1, total.prefillCalls());
        assertEquals(3, total.decodeStepCalls());
        assertEquals(total.tokensPrefill(), total.fromGraphs().promptTokens());
        assertEquals(total.tokensDecode(), total.fromGraphs().generatedTokens());
    }

    /** A graph another thread computed, or one outside the call, tells the call nothing: counted by its size. */
    @Test
    void onlyTheCallsOwnGraphTellsItsPosition() {
        aggregator.start(0);
        graph(8, MS, 2 * MS, 1, 0, 1);
        tokens.onDecode(7, 0, 3 * MS, 0x5000, 1, 0);
        graph(7, 10 * MS, 11 * MS, 1, 0, 1);
        tokens.onDecode(7, 20 * MS, 23 * MS, 0x5000, 1, 0);
        TokenTotals total = snapshot(1000 * MS).total().tokens();
        assertEquals(0, total.tokensPrefill());
        assertEquals(2, total.tokensDecode());
    }

    /**
     * A llama_process call whose batch was filled before the attach: the probe cannot tell its size (-1). The
     * ubatches llama.cpp split it into, each a graph in the call on its thread, can: 64 + 36 prompt tokens. A call
     * of unknown size with no graph of its own in it stays a call without tokens.
     */
    @Test
    void aCallOfUnknownSizeCountsTheTokensOfTheGraphsInIt() {
        aggregator.start(0);
        graph(7, MS, 2 * MS, 64, 0, 0);
        graph(7, 3 * MS, 4 * MS, 36, 64, 1);
        tokens.onDecode(7, 0, 5 * MS, 0x5000, -1, 0);
        graph(7, 10 * MS, 11 * MS, 1, 100, 1);
        tokens.onDecode(7, 10 * MS, 12 * MS, 0x5000, 1, 0);
        graph(8, 21 * MS, 22 * MS, 8, 0, 1); // another thread's graph
        tokens.onDecode(7, 20 * MS, 23 * MS, 0x5000, -1, 0);
        TokenTotals total = snapshot(1000 * MS).total().tokens();
        assertEquals(100, total.tokensPrefill());
        assertEquals(1, total.tokensDecode());
        assertEquals(3, total.decodeCalls());
        assertEquals(1, total.prefillCalls());
        assertEquals(1, total.decodeStepCalls());
    }

    @Test
    void nothingSeenIsSaidSoAndAnEncoderPassIsCountedApart() {
        aggregator.start(0);
        assertEquals(TokenSource.NONE, snapshot(500 * MS).total().tokens().source());
        tokens.onGraphTokens(graph.set(7, 0, MS, 0x2000, -1, -1, -1, -1, -1, -1, 2, EventLayout.GRAPH_LEVEL_SCHED,
                EventLayout.GRAPH_TOKENS_ENCODER, 0));
        TokenTotals total = snapshot(1000 * MS).total().tokens();
        assertEquals(TokenSource.GRAPHS, total.source());
        assertEquals(1, total.encodeCalls());
        assertEquals(0, total.decodeCalls());
        assertEquals(1, total.fromGraphs().encoderPasses());
    }
}
