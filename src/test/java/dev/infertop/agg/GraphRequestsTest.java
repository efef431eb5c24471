package dev.infertop.agg;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Requests told from the graphs of a program that computes one sequence at a time. */
class GraphRequestsTest {
    private static final long MS = 1_000_000L;

    /**
     * Two requests, the second's prompt continuing the first's context (an app that keeps its KV cache: positions
     * go on): a prompt in two chunks (0-10 ms, 10-30 ms), then 3 steps ending at 35, 41, 48 ms; a prompt 100-120 ms,
     * then 2 steps ending at 126, 133 ms.
     */
    @Test
    void promptsAndStepsOfOneSequenceAtATime() {
        GraphRequests requests = new GraphRequests(3);
        requests.onGraph(8, 0, 0, 0, 10 * MS);
        requests.onGraph(8, 0, 8, 10 * MS, 30 * MS);
        requests.onGraph(0, 1, 16, 30 * MS, 35 * MS);
        requests.onGraph(0, 1, 17, 35 * MS, 41 * MS);
        requests.onGraph(0, 1, 18, 41 * MS, 48 * MS);
        requests.onGraph(6, 0, 19, 100 * MS, 120 * MS);
        requests.onGraph(0, 1, 25, 120 * MS, 126 * MS);
        requests.onGraph(0, 1, 26, 126 * MS, 133 * MS);
        requests.closeInterval();
        assertTrue(requests.known());
        assertEquals(2, requests.requests());
        assertEquals(2, requests.totalTtft().count());
        assertEquals((30 + 20) / 2.0, requests.totalTtft().meanMs(), 0.05, "from each prompt's first graph to its end");
        assertEquals(5, requests.totalTpot().count(), "one sample per output after the first");
        assertEquals((5 + 6 + 7 + 6 + 7) / 5.0, requests.totalTpot().meanMs(), 0.05);
    }

    /**
     * llama-bench's shape: a 64-token prompt at position 0 with no step after it, then a generation run whose first
     * one-token graph is at position 0 (a prompt by the rule) and whose steps follow: two requests.
     */
    @Test
    void aPromptAtPositionZeroBeginsARequestEvenRightAfterAnotherPrompt() {
        GraphRequests requests = new GraphRequests(3);
        requests.onGraph(64, 0, 0, 0, 40 * MS);
        requests.onGraph(1, 0, 0, 50 * MS, 55 * MS);
        requests.onGraph(0, 1, 1, 55 * MS, 60 * MS);
        requests.closeInterval();
        assertEquals(2, requests.requests());
        assertEquals((40 + 5) / 2.0, requests.totalTtft().meanMs(), 0.05);
        assertEquals(1, requests.totalTpot().count());
        assertEquals(5, requests.totalTpot().meanMs(), 0.05);
    }

    /** Steps of a graph attached in the middle of a request: no prompt seen, no request and no TPOT guessed. */
    @Test
    void stepsWithNoPromptSeenAreNoRequest() {
        GraphRequests requests = new GraphRequests(3);
        requests.onGraph(0, 1, 40, 0, 5 * MS);
        requests.onGraph(0, 1, 41, 5 * MS, 10 * MS);
        requests.closeInterval();
        assertEquals(0, requests.requests());
        assertEquals(0, requests.totalTpot().count());
    }

    /** A graph that steps two sequences at once: the graphs cannot tell requests apart any more. */
    @Test
    void aGraphOfSeveralSequencesMakesTheRequestsUnknown() {
        GraphRequests requests = new GraphRequests(3);
        requests.onGraph(8, 0, 0, 0, 10 * MS);
        requests.onGraph(0, 1, 8, 10 * MS, 15 * MS);
        requests.onGraph(0, 2, -1, 15 * MS, 20 * MS);
        assertFalse(requests.known());
        requests.onGraph(8, 0, 0, 30 * MS, 40 * MS);
        requests.onGraph(0, 1, 8, 40 * MS, 45 * MS);
        requests.closeInterval();
        assertEquals(1, requests.requests(), "nothing counted after it");
    }
}
