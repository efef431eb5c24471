package dev.infertop.bpf;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;
import dev.infertop.ffi.LibC;
import dev.infertop.ffi.PerfEvent;
import dev.infertop.model.CounterEvent;
import dev.infertop.model.CounterSet;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The counters layer's perf events: one fd per online CPU per event of the set, opened with perf_event_open
 * (pid -1: whatever runs on that CPU) when the layer is switched on, put in the BPF map `counter_events` at
 * cpu * MAX_COUNTER_EVENTS + e, and closed (map slots cleared first) when it is switched off or infertop
 * stops. An event the kernel refuses is left out and named; when the PMU refuses every hardware event (a VM
 * without a virtual PMU) the layer says so plainly, and the other layers carry on.
 */
public final class PerfCounters implements Switchable {
    public static final String EVENTS_MAP = "counter_events";
    public static final String CONTROL_MAP = "counter_control";

    private final BpfObject object;
    private final CounterSet set;
    private final List<Integer> cpus;
    private final List<CounterEvent> opened = new ArrayList<>();
    private final List<int[]> fds = new ArrayList<>();
    private String problem = "";
    private Consumer<List<CounterEvent>> listener = events -> {};

    public PerfCounters(BpfObject object, CounterSet set) {
        this.object = object;
        this.set = set;
        this.cpus = onlineCpus();
    }

    /** Told the events that count (empty when off) each time the layer is switched. */
    public synchronized void listener(Consumer<List<CounterEvent>> listener) {
        this.listener = listener;
        listener.accept(List.copyOf(opened));
    }

    public synchronized List<CounterEvent> opened() {
        return List.copyOf(opened);
    }

    public CounterSet set() {
        return set;
    }

    @Override
    public synchronized void on() throws BpfException {
        if (!opened.isEmpty()) {
            return;
        }
        List<String> refused = new ArrayList<>();
        boolean pmuMissing = false;
        String firstError = "";
        for (CounterEvent event : set.events()) {
            int[] eventFds = new int[cpus.size()];
            int failure = 0;
            for (int i = 0; i < cpus.size(); i++) {
                int fd = PerfEvent.openOnCpu(event.type(), event.config(), cpus.get(i));
                if (fd < 0) {
                    failure = -fd;
                    for (int j = 0; j < i; j++) {
                        PerfEvent.closeFd(eventFds[j]);
                    }
                    break;
                }
                eventFds[i] = fd;
            }
            if (failure != 0) {
                refused.add(event.name());
                if (firstError.isEmpty()) {
                    firstError = "perf_event_open: " + LibC.strerror(failure);
                }
                pmuMissing |= event.needsPmu() && (failure == Errno.ENOENT || failure == PerfEvent.EOPNOTSUPP
                        || failure == PerfEvent.ENODEV);
                continue;
            }
            opened.add(event);
            fds.add(eventFds);
        }
        boolean someHardwareCounts = opened.stream().anyMatch(CounterEvent::needsPmu);
        if (refused.isEmpty()) {
            problem = "";
        } else if (pmuMissing && someHardwareCounts) {
            // A PMU that lacks some events: QEMU's emulated one has cycles but no instructions without -icount.
            problem = "this machine's PMU refuses " + String.join(", ", refused) + " (" + firstError + "): it does"
                    + " not implement " + (refused.size() == 1 ? "that event" : "those events") + "; the others count";
        } else if (pmuMissing) {
            problem = "no hardware PMU: the kernel refuses " + String.join(", ", refused) + " (" + firstError
                    + "), so this machine (a VM?) has no hardware counters; software events still work: "
                    + "--counters software";
        } else {
            problem = "the kernel refuses " + String.join(", ", refused) + " (" + firstError + ")";
        }
        try {
            for (int e = 0; e < opened.size(); e++) {
                for (int i = 0; i < cpus.size(); i++) {
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment value = arena.allocate(PerfEvent.FD);
                        value.set(PerfEvent.FD, 0, fds.get(e)[i]);
                        object.updateElement(EVENTS_MAP, slot(cpus.get(i), e), value);
                    }
                }
            }
            control(!opened.isEmpty());
        } catch (BpfException | RuntimeException failure) {
            closeEvents();
            throw failure;
        }
        listener.accept(List.copyOf(opened));
    }

    @Override
    public synchronized void off() throws BpfException {
        try {
            control(false);
        } finally {
            closeEvents();
            listener.accept(List.of());
        }
    }

    @Override
    public synchronized LayerStatus status(Layer layer, boolean wanted, String offReason,
                                           Predicate<Layer> attached) {
        List<String> probes = new ArrayList<>();
        for (CounterEvent event : opened) {
            probes.add(event.name() + " (perf type " + event.type() + " config 0x" + Long.toHexString(event.config())
                    + (event.role() == CounterEvent.Role.NONE ? "" : ", " + event.role().id()) + ") on CPUs "
                    + cpus + ", read at each node group's barrier");
        }
        if (!wanted) {
            return new LayerStatus(layer, LayerStatus.State.OFF, offReason, List.of());
        }
        if (opened.isEmpty()) {
            return new LayerStatus(layer, LayerStatus.State.UNAVAILABLE,
                    problem.isEmpty() ? "no counter could be opened" : problem, probes);
        }
        String reason = problem;
        if (!attached.test(Layer.OPERATOR)) {
            reason = (reason.isEmpty() ? "" : reason + "; ")
                    + "counts nothing while the operator layer is off (its barrier probes are the read points)";
        }
        return new LayerStatus(layer, problem.isEmpty() ? LayerStatus.State.ON : LayerStatus.State.PARTIAL, reason,
                probes);
    }

    @Override
    public synchronized void close() {
        try {
            off();
        } catch (BpfException | RuntimeException e) {
            closeEvents(); // the object may be gone already: the fds still are ours to close
        }
    }

    private void control(boolean enabled) throws BpfException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment value = arena.allocate(ControlLayout.COUNTER_CONTROL_SIZE, 4);
            value.set(ValueLayout.JAVA_INT, ControlLayout.COUNTER_CONTROL_ENABLED, enabled ? 1 : 0);
            value.set(ValueLayout.JAVA_INT, ControlLayout.COUNTER_CONTROL_N_EVENTS, opened.size());
            object.updateElement(CONTROL_MAP, 0, value);
        }
    }

    private void closeEvents() {
        int mapFd = -1;
        try {
            mapFd = object.mapFd(EVENTS_MAP);
        } catch (BpfException | RuntimeException e) {
            // object closed: its map, and the references it held, are gone with it
        }
        for (int e = 0; e < fds.size(); e++) {
            for (int i = 0; i < cpus.size(); i++) {
                if (mapFd >= 0) {
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment key = arena.allocate(ValueLayout.JAVA_INT);
                        key.set(ValueLayout.JAVA_INT, 0, slot(cpus.get(i), e));
                        int ignored = (int) LibBpf.bpf_map_delete_elem$handle().invokeExact(mapFd, key);
                    } catch (Throwable t) {
                        // best effort: closing the map releases it anyway
                    }
                }
                PerfEvent.closeFd(fds.get(e)[i]);
            }
        }
        fds.clear();
        opened.clear();
    }

    private static int slot(int cpu, int event) {
        return cpu * ControlLayout.MAX_COUNTER_EVENTS + event;
    }

    /** CPUs in /sys/devices/system/cpu/online ("0-3,6"), capped at MAX_COUNTER_CPUS. */
    static List<Integer> onlineCpus() {
        try {
            return parseCpuList(Files.readString(Path.of("/sys/devices/system/cpu/online")).strip());
        } catch (IOException | RuntimeException e) {
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
                all.add(i);
            }
            return all;
        }
    }

    static List<Integer> parseCpuList(String text) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : text.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            String[] range = part.strip().split("-");
            int from = Integer.parseInt(range[0]);
            int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
            for (int cpu = from; cpu <= to && cpu < ControlLayout.MAX_COUNTER_CPUS; cpu++) {
                cpus.add(cpu);
            }
        }
        return cpus;
    }
}
