package dev.infertop.process;

import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MachineIdleTimeTest {
    @Test
    void idleAndIowaitOfTheFirstLine() throws IOException {
        assertEquals((1200 + 34) * 10_000_000L,
                MachineIdleTime.ofCpuLine("cpu  4705 150 1120 1200 34 0 12 0 0 0"));
    }

    @Test
    void anotherLineIsRefused() {
        assertThrows(IOException.class, () -> MachineIdleTime.ofCpuLine("cpu0 1 2 3 4 5 6"));
        assertThrows(IOException.class, () -> MachineIdleTime.ofCpuLine("cpu  1 2 3 x 5 6"));
        assertThrows(IOException.class, () -> MachineIdleTime.ofCpuLine("cpu  1 2"));
    }

    @Test
    void thisMachineCountsUp() throws Exception {
        long before = MachineIdleTime.ns();
        Thread.sleep(50);
        assertTrue(MachineIdleTime.ns() >= before);
    }
}
