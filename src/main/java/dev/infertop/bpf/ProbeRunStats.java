package dev.infertop.bpf;

import dev.infertop.ffi.LibC;
import dev.infertop.ffi.LibBpf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * How often infertop's programs ran and how long they took, from the kernel's own per-program stats
 * (bpf_prog_info.run_cnt / run_time_ns, kept while run-time stats are enabled: one fd held for the session,
 * Linux 5.8+; bpftop reads the same two numbers). A uprobe program's run is one trap of the target's thread,
 * which costs more than the program itself: {@link Sample#uprobeHits} counts those.
 * <p>
 * Enabling stats makes the kernel time every BPF program on the machine (two clock reads a run); it ends
 * when the fd is closed.
 */
public final class ProbeRunStats implements AutoCloseable {
    /**
     * Cumulative counts since load: uprobe runs (traps), the part of them that the duty cycle switches, BPF time
     * (every program's), and the tracepoint programs' runs and their part of that time (no trap: their whole cost).
     */
    public record Sample(long uprobeHits, long arrivalHits, long bpfRunNs, long tracepointRuns,
                         long tracepointRunNs) {
        /** Counts without tracepoint programs. */
        public Sample(long uprobeHits, long arrivalHits, long bpfRunNs) {
            this(uprobeHits, arrivalHits, bpfRunNs, 0, 0);
        }

        public Sample minus(Sample earlier) {
            return new Sample(uprobeHits - earlier.uprobeHits, arrivalHits - earlier.arrivalHits,
                    bpfRunNs - earlier.bpfRunNs, tracepointRuns - earlier.tracepointRuns,
                    tracepointRunNs - earlier.tracepointRunNs);
        }

        /** The tracepoint programs' mean run time over these counts; NaN where none ran. */
        public double tracepointNsPerRun() {
            return tracepointRuns <= 0 ? Double.NaN : (double) tracepointRunNs / tracepointRuns;
        }
    }

    /** {@code clock}: the operator layer's clock sampler, whose run time counts but whose runs are not hits. */
    private record Program(int fd, boolean uprobe, boolean arrivals, boolean clock) {
        Program(int fd, boolean uprobe, boolean arrivals) {
            this(fd, uprobe, arrivals, false);
        }
    }

    private final int statsFd;
    private final List<Program> programs;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment info = arena.allocate(LibBpf.ProgInfo.SIZE, 8);
    private final MemorySegment infoLength = arena.allocate(ValueLayout.JAVA_INT);

    private ProbeRunStats(int statsFd, List<Program> programs) {
        this.statsFd = statsFd;
        this.programs = programs;
    }

    /** Stats for every program of {@link ProbeSpec#ALL} loaded in {@code object}; a clear exception where not. */
    public static ProbeRunStats open(BpfObject object) throws BpfException {
        int fd;
        try {
            fd = (int) LibBpf.bpf_enable_stats$handle().invokeExact(LibBpf.BPF_STATS_RUN_TIME);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (fd < 0) {
            throw new BpfException("cannot turn on BPF run-time stats (Linux 5.8+): " + LibBpf.strerror(fd));
        }
        List<Program> programs = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (ProbeSpec spec : ProbeSpec.ALL) {
            for (String name : programsOf(spec)) {
                if (name == null || !seen.add(name)) {
                    continue;
                }
                int programFd;
                try {
                    programFd = (int) LibBpf.bpf_program__fd$handle().invokeExact(object.program(name));
                } catch (BpfException e) {
                    continue;
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
                if (programFd >= 0) { // not loaded (autoload off): never runs
                    programs.add(new Program(programFd, !(spec instanceof ProbeSpec.TracepointProbe),
                            ArrivalProbes.isArrivalProgram(name)));
                }
            }
        }
        try {
            int clockFd = (int) LibBpf.bpf_program__fd$handle().invokeExact(object.program(ClockSampleLink.PROGRAM));
            if (clockFd >= 0) {
                programs.add(new Program(clockFd, false, false, true));
            }
        } catch (BpfException e) {
            // an object without the sampler (a test's): nothing to count
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        return new ProbeRunStats(fd, List.copyOf(programs));
    }

    private static List<String> programsOf(ProbeSpec spec) {
        return switch (spec) {
            case ProbeSpec.FunctionProbe f -> java.util.Arrays.asList(f.entryProgram(), f.exitProgram());
            case ProbeSpec.CallSiteProbe c -> List.of(c.program());
            case ProbeSpec.TracepointProbe t -> List.of(t.program());
        };
    }

    /** The counts now (cumulative since each program was loaded). */
    public synchronized Sample sample() {
        long hits = 0;
        long arrivals = 0;
        long runNs = 0;
        long tracepointRuns = 0;
        long tracepointRunNs = 0;
        for (Program program : programs) {
            info.fill((byte) 0);
            infoLength.set(ValueLayout.JAVA_INT, 0, LibBpf.ProgInfo.SIZE);
            int rc;
            try {
                rc = (int) LibBpf.bpf_obj_get_info_by_fd$handle().invokeExact(program.fd(), info, infoLength);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (rc != 0) {
                continue;
            }
            long runs = info.get(ValueLayout.JAVA_LONG, LibBpf.ProgInfo.RUN_CNT);
            long programNs = info.get(ValueLayout.JAVA_LONG, LibBpf.ProgInfo.RUN_TIME_NS);
            runNs += programNs;
            if (program.clock()) {
                continue; // its run time is the budget's; its runs are timer interrupts, not traps or tracepoints
            }
            if (program.uprobe()) {
                hits += runs;
                if (program.arrivals()) {
                    arrivals += runs;
                }
            } else {
                tracepointRuns += runs;
                tracepointRunNs += programNs;
            }
        }
        return new Sample(hits, arrivals, runNs, tracepointRuns, tracepointRunNs);
    }

    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) {
            LibC.closeQuietly(statsFd);
            arena.close();
        }
    }
}
