package dev.infertop.cli;

import com.code_intelligence.jazzer.junit.FuzzTest;

class OperatorRuleFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void parse(String text) {
        try {
            OperatorRule rule = OperatorRule.parse(text);
            if (Double.isNaN(rule.threshold())) {
                throw new AssertionError("NaN threshold from " + text);
            }
        } catch (UserError expected) {
            // refused with one line: fine
        }
    }
}
