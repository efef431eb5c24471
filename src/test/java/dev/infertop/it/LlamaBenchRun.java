package dev.infertop.it;

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
}
