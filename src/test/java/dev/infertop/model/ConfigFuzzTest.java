package dev.infertop.model;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.infertop.tui.KeyTable;

/**
 * The line-based config files (counters.conf, backends.conf, keys.conf, through ConfigFile): any text is
 * parsed or refused with an IllegalArgumentException naming the line; no other exception.
 */
class ConfigFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void parse(FuzzedDataProvider data) {
        int which = data.consumeInt(0, 2);
        String text = data.consumeRemainingAsString();
        try {
            switch (which) {
                case 0 -> {
                    CounterSets.parse(text).all();
                }
                case 1 -> BackendNames.parse(text);
                default -> KeyTable.parse(text).keysByAction();
            }
        } catch (IllegalArgumentException refused) {
            if (!refused.getMessage().startsWith("text:")) {
                throw new AssertionError("a refusal that does not name the line: " + refused.getMessage());
            }
        }
    }
}
