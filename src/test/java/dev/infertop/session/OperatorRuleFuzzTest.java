package dev.infertop.session;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * {@code --op-when} text: parsed into a rule with a finite threshold, or refused with one UserError line; no
 * other exception. Seeds in OperatorRuleFuzzTestInputs/parse; see "Build and test" in the README for fuzzing mode.
 */
class OperatorRuleFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void parse(FuzzedDataProvider data) {
        String text = data.consumeRemainingAsString();
        try {
            OperatorRule rule = OperatorRule.parse(text);
            if (!Double.isFinite(rule.threshold()) || rule.threshold() < 0) {
                throw new AssertionError("threshold " + rule.threshold() + " from '" + text + "'");
            }
        } catch (UserError refused) {
            if (refused.getMessage().contains("\n") && !text.contains("\n")) {
                throw new AssertionError("a refusal of more than one line: " + refused.getMessage());
            }
        }
    }
}
