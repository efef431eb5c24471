package dev.infertop.it;

import dev.infertop.io.ConfigFiles;
import dev.infertop.bpf.BpfObject;
import dev.infertop.bpf.InfertopProbes;
import dev.infertop.bpf.PerfCounters;
import dev.infertop.ffi.PerfEvent;
import dev.infertop.model.CounterSet;
import dev.infertop.model.CounterSets;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counters layer's perf events in this JVM, against the real BPF object: one fd per online CPU per event
 * while the layer is on, none once it is switched off or closed, and a plain "no hardware PMU" where the
 * kernel refuses hardware events.
 */
class PerfCountersIT {
    private static final InfertopProbes.StructOffsets ANY_OFFSETS = new InfertopProbes.StructOffsets(4, 16, 0, 0, 0,
            0, 0, 0, 0, 0, 0);

    @BeforeAll
    static void requirements() {
        Requirements.requireRoot();
    }

    /** perf event fds this process holds (uprobe links are perf events too, but none are attached here). */
    private static long perfFds() throws IOException {
        return perfFds(ProcessHandle.current().pid());
    }

    /** perf event fds process {@code pid} holds: counter events and uprobe links alike. */
    static long perfFds(long pid) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).toString().equals("anon_inode:[perf_event]");
                } catch (IOException gone) {
                    return false;
                }
            }).count();
        }
    }

    static int onlineCpus() throws IOException {
        String text = Files.readString(Path.of("/sys/devices/system/cpu/online")).strip();
        int count = 0;
        for (String part : text.split(",")) {
            String[] range = part.split("-");
            count += range.length == 1 ? 1 : Integer.parseInt(range[1]) - Integer.parseInt(range[0]) + 1;
        }
        return count;
    }

    @Test
    void softwareEventsOpenPerCpuAndCloseWhenSwitchedOffOrClosed() throws Exception {
        long before = perfFds();
        CounterSet software = ConfigFiles.counterSets().choose("software", InfertopProbes.architecture());
        try (BpfObject object = InfertopProbes.load(0, 64 * 1024, ANY_OFFSETS, null)) {
            PerfCounters counters = new PerfCounters(object, software);
            counters.on();
            assertEquals(4, counters.opened().size());
            assertEquals(before + 4L * onlineCpus(), perfFds(), "one fd per CPU per event");
            LayerStatus on = counters.status(Layer.COUNTERS, true, "", layer -> false);
            assertEquals(LayerStatus.State.ON, on.state());
            assertTrue(on.reason().contains("counts nothing while the operator layer is off"), on.reason());
            assertEquals(4, on.probes().size());

            counters.off();
            assertEquals(before, perfFds(), "switched off: every fd closed");
            assertEquals(List.of(), counters.opened());
            assertEquals(LayerStatus.State.OFF,
                    counters.status(Layer.COUNTERS, false, "switched off live", layer -> true).state());

            counters.on();
            assertEquals(before + 4L * onlineCpus(), perfFds());
            counters.close();
            assertEquals(before, perfFds(), "closed: every fd closed");
        }
        assertEquals(before, perfFds());
    }

    @Test
    void hardwareEventsWithoutAPmuAreNamedPlainly() throws Exception {
        int probe = PerfEvent.openOnCpu(PerfEvent.TYPE_HARDWARE, 0, 0);
        if (probe >= 0) {
            PerfEvent.closeFd(probe);
        }
        long before = perfFds();
        CounterSet hardware = ConfigFiles.counterSets().choose("x86_64", InfertopProbes.architecture());
        try (BpfObject object = InfertopProbes.load(0, 64 * 1024, ANY_OFFSETS, null)) {
            PerfCounters counters = new PerfCounters(object, hardware);
            counters.on();
            LayerStatus status = counters.status(Layer.COUNTERS, true, "", layer -> true);
            if (probe >= 0) {
                assertTrue(counters.opened().size() > 0, "this machine has a PMU: " + status);
            } else {
                assertEquals(LayerStatus.State.UNAVAILABLE, status.state());
                assertEquals("no hardware PMU: the kernel refuses cache-misses, instructions, cycles, cache-references "
                        + "(perf_event_open: No such file or directory), so this machine (a VM?) has no hardware "
                        + "counters; software events still work: --counters software", status.reason());
                assertEquals(before, perfFds(), "nothing left open");
            }
            counters.close();
        }
        assertEquals(before, perfFds());
    }
}
