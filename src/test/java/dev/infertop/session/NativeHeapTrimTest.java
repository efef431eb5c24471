package dev.infertop.session;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The native heap is trimmed at 2, 5, 15 and 60 s after start, then every 5 minutes, never on every tick. */
class NativeHeapTrimTest {
    @Test
    void trimsOnItsScheduleOnly() {
        long start = 1_000_000_000_000L;
        NativeHeapTrim trim = new NativeHeapTrim(start);
        List<Long> trimmedAtS = new ArrayList<>();
        for (long s = 0; s <= 700; s++) { // one tick a second
            if (trim.onTick(start + s * 1_000_000_000L)) {
                trimmedAtS.add(s);
            }
        }
        assertEquals(List.of(2L, 5L, 15L, 60L, 360L, 660L), trimmedAtS);
    }
}
