package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What {@code llama-bench -p P -n N -r R} runs, the oracle of the token and graph counts: pp P = one warm-up call
 * plus R calls of P tokens; tg N = one warm-up call of 1 token plus R × N calls of 1 token; one CPU graph each.
 * Each generation run (the warm-up and the R timed ones) starts on a cleared memory, at position 0: by the one rule
 * for a generated token (man/infertop.1, "What a generated token is") its first token is that sequence's prompt.
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

    /** Generation runs: the warm-up and the timed ones, each starting a sequence at position 0. */
    long generationRuns() {
        return repetitions + 1L;
    }

    /** Prompt tokens by the rule: the prompt calls' and each generation run's first token. */
    long promptTokensCounted() {
        return prefillTokens() + generationRuns();
    }

    /** Generated tokens by the rule: every one-token call but each generation run's first. */
    long generatedTokensCounted() {
        return decodeSteps() - generationRuns();
    }

    /** infertop's token counts of this run (its final JSON object) equal llama-bench's arithmetic. */
    void assertTokenCounts(JsonNode total) {
        assertEquals(calls(), total.get("decode_calls").asLong(), total.toString());
        assertEquals(prefillCalls() + generationRuns(), total.get("prefill_calls").asLong(), total.toString());
        assertEquals(generatedTokensCounted(), total.get("decode_step_calls").asLong());
        assertEquals(promptTokensCounted(), total.get("tokens_prefill").asLong());
        assertEquals(generatedTokensCounted(), total.get("tokens_decode").asLong());
        assertEquals(0, total.get("failed_calls").asLong());
    }
}
