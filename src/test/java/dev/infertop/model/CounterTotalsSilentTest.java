package dev.infertop.model;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CounterTotalsSilentTest {
    private static CounterTotals totals(List<String> events, List<Long> values, long groups) {
        return new CounterTotals("arm64", events, 64, 0, -1, 1, List.of(), values, groups, 0, 0, 0, 1_000_000,
                List.of());
    }

    @Test
    void hardwareEventsAtZeroWhileCyclesCountAreSilent() {
        CounterTotals qemu = totals(List.of("r2A", "cycles", "r13"), List.of(0L, 1_689_702_947L, 0L), 340);
        assertEquals(List.of("r2A", "r13"), qemu.silentEvents());
        assertEquals("r2A, r13 counted nothing over 340 node groups while the other events counted: this PMU does"
                + " not implement them (an emulated one?); refill bandwidth and the verdicts are unknown here",
                qemu.silentNotice());
    }

    @Test
    void tooFewGroupsNothingCountedOrSoftwareEventsAreNotSilent() {
        assertEquals(List.of(), totals(List.of("r2A", "cycles"), List.of(0L, 5L), 9).silentEvents(), "9 groups");
        assertEquals(List.of(), totals(List.of("r2A", "cycles"), List.of(0L, 0L), 340).silentEvents(),
                "nothing counted at all: the layer says why elsewhere");
        assertEquals(List.of(), totals(List.of("task-clock", "page-faults", "cpu-migrations"),
                List.of(9_000L, 0L, 0L), 340).silentEvents(), "software events may rightly stay at 0");
        assertEquals("", totals(List.of("r2A", "cycles"), List.of(12L, 5L), 340).silentNotice());
        assertEquals("r13 counted nothing over 12 node groups while the other events counted: this PMU does not"
                + " implement it (an emulated one?)", totals(List.of("r2A", "r13"), List.of(3L, 0L), 12).silentNotice());
    }
}
