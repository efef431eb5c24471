package dev.infertop.agg;

import dev.infertop.event.NameTable;
import dev.infertop.model.Interferer;
import dev.infertop.model.SchedOpTotals;
import dev.infertop.model.SchedThreadTotals;
import dev.infertop.model.SchedTotals;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Thread states, per-op off-CPU time and interferers from sched records, checked to the nanosecond. */
class SchedAggregatorTest {
    private static final int TARGET = 4242;
    private final NameTable names = new NameTable();
    private long hits;
    private final SchedAggregator sched = new SchedAggregator(TARGET, names, () -> hits);

    private int comm(String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(16);
            byte[] text = name.getBytes(StandardCharsets.US_ASCII);
            MemorySegment.copy(text, 0, bytes, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, text.length);
            return names.intern(bytes, 0, 16);
        }
    }

    @Test
    void preemptedTimeIsRunnableAndSleepSplitsAtTheWakeUp() {
        // Thread 7: ran 100, preempted at 1000 until 1300 (runnable 300); ran 50, slept 1350..2000, woken at
        // 2000, back on at 2100 (sleeping 650, runnable 100).
        sched.onSchedOff(7, 1000, 1300, 0, 100, true);
        sched.onSchedOff(7, 1350, 2100, 2000, 50, false);
        SchedThreadTotals t = sched.interval().threads().getFirst();
        assertEquals(new SchedThreadTotals(7, 150, 400, 650, 2, 1), t);
        assertEquals(400.0 / 1200, t.runnableFraction(), 1e-12);
    }

    @Test
    void aWakeUpNotSeenCountsTheWholeStretchAsSleep() {
        sched.onSchedOff(7, 1000, 1500, 0, 10, false);     // woken before the layer attached
        sched.onSchedOff(7, 2000, 2500, 1900, 10, false);  // a wake-up outside the stretch: not trusted
        assertEquals(new SchedThreadTotals(7, 20, 0, 1000, 2, 0), sched.interval().threads().getFirst());
    }

    @Test
    void intervalsResetTotalsDoNot() {
        hits = 100;
        sched.interval(); // the interval starts at 100 hits
        sched.onSchedOff(7, 1000, 1300, 0, 100, true);
        hits = 350;
        SchedTotals interval = sched.interval();
        assertEquals(250, interval.kernelHits());
        assertEquals(1, interval.offRecords());
        sched.onSchedOff(7, 2000, 2200, 0, 40, true);
        assertEquals(new SchedThreadTotals(7, 40, 200, 0, 1, 1), sched.interval().threads().getFirst());
        assertEquals(new SchedThreadTotals(7, 140, 500, 0, 2, 2), sched.totals().threads().getFirst());
        assertEquals(350, sched.totals().kernelHits());
    }

    @Test
    void offCpuTimeGoesToTheOpsWhoseGroupsItOverlaps() {
        // Preempted 1000..1300; slept 1500..1800, woken 1800, on at 1900.
        sched.onSchedOff(7, 1000, 1300, 0, 0, true);
        sched.onSchedOff(7, 1500, 1900, 1800, 0, false);
        sched.onGroup(7, "MUL_MAT", 900, 1100);   // runnable 1000..1100 = 100
        sched.onGroup(7, "ROPE", 1100, 1600);     // runnable 1100..1300 = 200, sleeping 1500..1600 = 100
        sched.onGroup(7, "MUL_MAT", 1600, 2000);  // sleeping 1600..1800 = 200, runnable 1800..1900 = 100
        sched.onGroup(7, "ADD", 2000, 2100);      // nothing off-CPU
        sched.onGroup(8, "ADD", 1000, 2000);      // a thread with no stretches
        List<SchedOpTotals> ops = sched.interval().ops();
        assertEquals(List.of(new SchedOpTotals("MUL_MAT", 200, 200), new SchedOpTotals("ROPE", 200, 100)), ops);
    }

    @Test
    void interferersAreSummedPerProcessWorstFirstWithTheirShareOfTheWait() {
        sched.onSchedOff(7, 1000, 2000, 0, 0, true);   // thread 7 waited 1000
        sched.onSchedOff(8, 1000, 2000, 1000, 0, false); // thread 8 woken at once, waited 1000
        sched.onSchedCulprit(7, 600, 900, 900, comm("hog"));
        sched.onSchedCulprit(8, 500, 900, 900, comm("hog"));
        sched.onSchedCulprit(8, 300, 31, 12, comm("kworker/1:0"));
        sched.onSchedCulprit(7, 200, TARGET + 1, TARGET, comm("llama-bench"));
        SchedTotals totals = sched.interval();
        assertEquals(List.of(new Interferer(900, "hog", 1100, false), new Interferer(12, "kworker/1:0", 300, false),
                new Interferer(TARGET, "llama-bench", 200, true)), totals.interferers());
        assertEquals(new Interferer(900, "hog", 1100, false), totals.worstInterferer());
        assertEquals(2000, totals.runnableNs());
        assertEquals(0.55, totals.waitShare(totals.worstInterferer()), 1e-12);
        assertEquals(4, totals.culpritRecords());
        assertNull(sched.interval().worstInterferer());
        assertEquals(1100, sched.totals().worstInterferer().ns());
    }
}
