package dev.infertop.model;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CounterFiguresTest {
    @Test
    void scalingExtrapolatesAMultiplexedCountLikePerf() {
        assertEquals(1_000, CounterFigures.scaled(1_000, 2_000_000, 2_000_000), "counted all the time: as read");
        assertEquals(4_000, CounterFigures.scaled(1_000, 2_000_000, 500_000), "on the PMU a quarter of the time");
        assertEquals(1_500, CounterFigures.scaled(1_000, 3, 2));
        assertEquals(0, CounterFigures.scaled(1_000, 2_000_000, 0), "never on the PMU: nothing known");
        assertEquals(0, CounterFigures.scaled(7, 0, 0), "no time at all: nothing known");
        // No overflow where raw x enabled would pass 2^63.
        assertEquals(20_000_000_000L, CounterFigures.scaled(10_000_000_000L, 4_000_000_000L, 2_000_000_000L));
    }

    @Test
    void refillBandwidthIsRefillsTimesLineSizePerSecond() {
        // 1,000,000 refills of 64-byte lines in 0.5 s = 128 MB/s.
        assertEquals(128_000_000.0, CounterFigures.refillBytesPerSecond(1_000_000, 64, 500_000_000L), 1e-6);
        assertEquals(0.0, CounterFigures.refillBytesPerSecond(1_000_000, 64, 0));
    }

    @Test
    void ipcAndRefillsPerKiloInstruction() {
        assertEquals(2.5, CounterFigures.ipc(5_000, 2_000), 1e-12);
        assertTrue(Double.isNaN(CounterFigures.ipc(5_000, 0)));
        assertEquals(12.5, CounterFigures.refillsPerKiloInstruction(25, 2_000), 1e-12);
        assertTrue(Double.isNaN(CounterFigures.refillsPerKiloInstruction(25, 0)));
    }

    @Test
    void verdictAtTheThresholds() {
        assertEquals(CounterFigures.Verdict.MEMORY, CounterFigures.verdict(2.0, 5.0), "5 refills/1k instr: memory");
        assertEquals(CounterFigures.Verdict.COMPUTE, CounterFigures.verdict(1.0, 4.99), "IPC 1.0, few refills");
        assertEquals(CounterFigures.Verdict.MIXED, CounterFigures.verdict(0.99, 4.99));
        assertEquals(CounterFigures.Verdict.UNKNOWN, CounterFigures.verdict(Double.NaN, 1.0));
        assertEquals(CounterFigures.Verdict.UNKNOWN, CounterFigures.verdict(1.5, Double.NaN));
        assertEquals("memory-bound: >= 5.0 refills/1k instr; compute-bound: IPC >= 1.00", CounterFigures.thresholds());
    }

    @Test
    void totalsUseTheSetsRoles() {
        // refills, instructions, cycles, other
        OpCounters matmul = new OpCounters("MUL_MAT", 10, 1, 0, List.of(600L, 100_000L, 50_000L, 9L), 2_000_000, 1_000_000);
        CounterTotals totals = new CounterTotals("x86_64", List.of("cache-misses", "instructions", "cycles", "x"), 64,
                0, 1, 2, List.of(matmul), List.of(600L, 100_000L, 50_000L, 9L), 10, 1, 0, 0, 2_000_000, List.of());
        assertEquals(2.0, totals.ipc(matmul), 1e-12);
        assertEquals(6.0, totals.refillsPerKiloInstruction(matmul), 1e-12);
        assertEquals(CounterFigures.Verdict.MEMORY, totals.verdict(matmul));
        // 600 x 64 B over the op's 1 ms wall time = 38.4 MB/s; over a 2 ms span = 19.2 MB/s.
        assertEquals(38_400_000.0, totals.refillBytesPerSecond(matmul), 1e-6);
        assertEquals(19_200_000.0, totals.refillBytesPerSecond(2_000_000), 1e-6);
        CounterTotals software = new CounterTotals("software", List.of("task-clock"), 64, -1, -1, -1, List.of(matmul),
                List.of(5L), 1, 0, 0, 0, 1, List.of());
        assertEquals(CounterFigures.Verdict.UNKNOWN, software.verdict(matmul));
        assertEquals(0.0, software.refillBytesPerSecond(1_000));
    }
}
