package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What {@code llama-bench -p P -n N -r R} runs, the oracle of the token and graph counts: pp P = one warm-up call
 * plus R calls of P tokens; tg N = one warm-up call of 1 token plus R × N calls of 1 token; one CPU graph each.
 */
record LlamaBenchRun(int promptTokens, int generatedTokens, int repetitions) {
    long prefillCalls() {
        return repetitions + 1L;
    }

    long decodeSteps() {
        return (long) repetitions * generatedTokens + 1;
    }

    long calls() {
        return prefillCalls() + decodeSteps();
    }

    long prefillTokens() {
        return prefillCalls() * promptTokens;
    }

    /** infertop's token counts of this run (its final JSON object) equal llama-bench's arithmetic. */
    void assertTokenCounts(JsonNode total) {
        assertEquals(calls(), total.get("decode_calls").asLong(), total.toString());
        assertEquals(prefillCalls(), total.get("prefill_calls").asLong());
        assertEquals(decodeSteps(), total.get("decode_step_calls").asLong());
        assertEquals(prefillTokens(), total.get("tokens_prefill").asLong());
        assertEquals(decodeSteps(), total.get("tokens_decode").asLong());
        assertEquals(0, total.get("failed_calls").asLong());
    }
}
