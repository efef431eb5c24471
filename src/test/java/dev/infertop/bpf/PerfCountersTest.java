package dev.infertop.bpf;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class PerfCountersTest {
    @Test
    void onlineCpuListsAsTheKernelWritesThem() {
        assertEquals(List.of(0, 1), PerfCounters.parseCpuList("0-1"));
        assertEquals(List.of(0, 1, 2, 3, 6, 8, 9), PerfCounters.parseCpuList("0-3,6,8-9"));
        assertEquals(List.of(5), PerfCounters.parseCpuList("5"));
        assertEquals(1024, PerfCounters.parseCpuList("0-2047").size(), "capped at MAX_COUNTER_CPUS");
    }
}
