package dev.infertop.agg;

import dev.infertop.event.NameTable;
import dev.infertop.history.CounterTimeline;
import dev.infertop.history.FlightRecorder.Kind;
import dev.infertop.history.FlightRecorder.Slice;
import dev.infertop.history.FlightRecorder;
import dev.infertop.history.SchedTimeline;
import dev.infertop.model.CounterEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Thread-state slices and counter samples the sched and counters layers record for a snapshot's timeline. */
class DeepLayerTimelineTest {
    private static String describe(FlightRecorder.Window w, Slice s) {
        return s.kind() + " " + s.tid() + " " + w.label(s.label()) + " " + s.startNs() + ".." + s.endNs()
                + (s.detail() >= 0 ? " by " + w.label(s.detail()) + " pid " + SchedTimeline.culpritPid(s.value())
                + " " + SchedTimeline.culpritNs(s.value()) + " ns" : "");
    }

    private static List<String> all(FlightRecorder recorder, long nowNs) {
        FlightRecorder.Window w = recorder.copyWindow(nowNs);
        return w.slices().stream().map(s -> describe(w, s)).toList();
    }

    @Test
    void aStretchOffTheCpuSplitsIntoRunningSleepingAndRunnableNamedByItsLongestCulprit() {
        FlightRecorder recorder = new FlightRecorder(64, 1_000_000_000L);
        SchedTimeline timeline = new SchedTimeline(recorder);
        // ran 1000..2000, slept 2000..2500, woken at 2500, waited for a CPU until 3000
        timeline.onSchedOff(7, 2_000, 3_000, 2_500, 1_000);
        timeline.onCulprit(7, 120, 300, "kworker/0:1");
        timeline.onCulprit(7, 350, 4242, "stress-ng");
        timeline.onCulprit(7, 30, 500, "sshd"); // less than the one named: not named
        // preempted at 5000 after 1500 on the CPU, back at 5400: no sleep
        timeline.onSchedOff(7, 5_000, 5_400, 5_000, 1_500);
        assertEquals(List.of(
                "THREAD_STATE 7 running 1000..2000",
                "THREAD_STATE 7 off-CPU (sleeping) 2000..2500",
                "THREAD_STATE 7 off-CPU (runnable) 2500..3000 by stress-ng pid 4242 350 ns",
                "THREAD_STATE 7 running 3500..5000",
                "THREAD_STATE 7 off-CPU (runnable) 5000..5400"), all(recorder, 10_000));
    }

    @Test
    void aCulpritAfterASleepWithoutWaitNamesNothing() {
        FlightRecorder recorder = new FlightRecorder(64, 1_000_000_000L);
        SchedTimeline timeline = new SchedTimeline(recorder);
        timeline.onSchedOff(7, 2_000, 3_000, 2_500, 0);
        timeline.onSchedOff(7, 4_000, 5_000, 5_000, 0); // slept all the way (no wake-up seen): no wait
        timeline.onCulprit(7, 100, 1, "x");
        assertEquals(List.of(
                "THREAD_STATE 7 off-CPU (sleeping) 2000..2500",
                "THREAD_STATE 7 off-CPU (runnable) 2500..3000",
                "THREAD_STATE 7 off-CPU (sleeping) 4000..5000"), all(recorder, 10_000));
    }

    @Test
    void theSchedAggregatorRecordsStatesOnlyOnceKeptForSnapshots() {
        FlightRecorder recorder = new FlightRecorder(64, 1_000_000_000L);
        SchedAggregator sched = new SchedAggregator(1, new NameTable(), () -> 0);
        sched.onSchedOff(7, 2_000, 3_000, 0, 500, true);
        assertEquals(0, recorder.recordsWritten());
        sched.keepForSnapshots(recorder);
        // wake-up before the switch-out is not this stretch's: slept until on (SchedAggregator's rule)
        sched.onSchedOff(7, 4_000, 5_000, 100, 500, false);
        sched.onSchedOff(8, 6_000, 6_200, 0, 0, true);
        assertEquals(List.of(
                "THREAD_STATE 7 running 3500..4000",
                "THREAD_STATE 7 off-CPU (sleeping) 4000..5000",
                "THREAD_STATE 8 off-CPU (runnable) 6000..6200"), all(recorder, 10_000));
    }

    @Test
    void amendingAnOverwrittenRecordFails() {
        FlightRecorder recorder = new FlightRecorder(2, 1_000);
        int l = recorder.label("x");
        recorder.record(Kind.THREAD_STATE, 1, 0, 1, l, -1, 0);
        recorder.record(Kind.THREAD_STATE, 1, 1, 2, l, -1, 0);
        assertTrue(recorder.amend(0, l, 5));
        recorder.record(Kind.THREAD_STATE, 1, 2, 3, l, -1, 0);
        assertFalse(recorder.amend(0, l, 5), "record 0 was overwritten");
        assertFalse(recorder.amend(3, l, 5), "record 3 is not written yet");
    }

    private static final List<CounterEvent> L3 = List.of(
            new CounterEvent("instructions", CounterEvent.HARDWARE, 1, CounterEvent.Role.INSTRUCTIONS),
            new CounterEvent("l3-refills", CounterEvent.RAW, 0x2a, CounterEvent.Role.REFILLS));
    private static final List<CounterEvent> SOFTWARE = List.of(
            new CounterEvent("task-clock", CounterEvent.SOFTWARE, 1, CounterEvent.Role.NONE),
            new CounterEvent("page-faults", CounterEvent.SOFTWARE, 2, CounterEvent.Role.NONE));

    private static List<String> counters(FlightRecorder recorder) {
        FlightRecorder.Window w = recorder.copyWindow(1_000_000_000L);
        return w.slices().stream().map(s -> w.label(s.label()) + " @" + s.startNs() + " = " + s.counterValue())
                .toList();
    }

    @Test
    void refillsBecomeOneBandwidthSamplePerTenMillisecondBin() {
        FlightRecorder recorder = new FlightRecorder(64, 1_000_000_000L);
        CounterTimeline timeline = new CounterTimeline(recorder);
        // two threads' graphs over 0..6 ms, then one to 10 ms: 1000 + 2000 + 2000 refills of 64 B in 10 ms
        timeline.onGraph(L3, 64, 0, 6_000_000, new long[] {9, 1_000, 0, 0});
        timeline.onGraph(L3, 64, 0, 5_000_000, new long[] {9, 2_000, 0, 0});
        assertEquals(List.of(), counters(recorder), "the bin is 6 ms long: not closed");
        timeline.onGraph(L3, 64, 6_000_000, 10_000_000, new long[] {9, 2_000, 0, 0});
        // 5000 x 64 B in 10 ms = 32 MB/s
        timeline.onGraph(L3, 64, 10_000_000, 30_000_000, new long[] {9, 10_000, 0, 0});
        // 10000 x 64 B in 20 ms = 32 MB/s
        assertEquals(List.of("L3 refill MB/s @10000000 = 32.0", "L3 refill MB/s @30000000 = 32.0"),
                counters(recorder));
    }

    @Test
    void withoutRefillsEachEventGetsItsRate() {
        FlightRecorder recorder = new FlightRecorder(64, 1_000_000_000L);
        CounterTimeline timeline = new CounterTimeline(recorder);
        timeline.onGraph(SOFTWARE, 64, 0, 20_000_000, new long[] {15_000_000, 4, 0, 0});
        assertEquals(List.of("task-clock per s @20000000 = 7.5E8", "page-faults per s @20000000 = 200.0"),
                counters(recorder));
    }
}
