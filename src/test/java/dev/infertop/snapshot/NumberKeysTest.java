package dev.infertop.snapshot;

import org.junit.jupiter.api.Test;

import java.util.OptionalInt;

import static org.junit.jupiter.api.Assertions.assertEquals;

class NumberKeysTest {
    @Test
    void onlyPlainNonNegativeIntsAreNumbers() {
        assertEquals(OptionalInt.of(4242), NumberKeys.of("4242"));
        assertEquals(OptionalInt.of(0), NumberKeys.of("0"));
        assertEquals(OptionalInt.of(Integer.MAX_VALUE), NumberKeys.of("2147483647"));
        for (String key : new String[] {"", "graph_computes", "-1", "+1", "1.0", " 1", "2147483648", "99999999999",
                "１２"}) {
            assertEquals(OptionalInt.empty(), NumberKeys.of(key), key);
        }
    }
}
