package dev.infertop.session;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class OperatorRuleTest {
    @Test
    void aRuleIsAMetricAComparisonAndAThreshold() {
        OperatorRule rule = OperatorRule.parse(" TPS <= 5.5 ");
        assertEquals(OperatorRule.Comparison.LE, rule.comparison());
        assertEquals(5.5, rule.threshold());
    }

    @Test
    void aThresholdPastADoublesRangeIsRefusedInOneShortLine() {
        UserError refused = assertThrows(UserError.class, () -> OperatorRule.parse("tps>=" + "5".repeat(400)));
        assertEquals("--op-when: the threshold 555555555555… (400 characters) is too large", refused.getMessage());
        assertEquals(2, refused.exitCode());
        assertEquals(1e300, OperatorRule.parse("ttft<1" + "0".repeat(300)).threshold(), 1e285, "large, within range");
    }
}
