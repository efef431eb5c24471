package dev.infertop.bpf;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;
import dev.infertop.ffi.PerfEvent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The operator layer's clock sampler on one CPU: a cpu-clock perf event with {@code handle_op_sample} attached. The
 * link owns the event's fd; closing the link disables and closes both.
 */
public final class ClockSampleLink implements ProbeLink {
    public static final String PROGRAM = "handle_op_sample";

    private MemorySegment link;
    private final int cpu;

    private ClockSampleLink(MemorySegment link, int cpu) {
        this.link = link;
        this.cpu = cpu;
    }

    /** Opens the timer on {@code cpu} and attaches the sampler program to it (bpf_program__attach_perf_event(3)). */
    public static ClockSampleLink attach(BpfObject object, int cpu, long periodNs) throws BpfException {
        int fd = PerfEvent.openClockSampler(cpu, periodNs);
        if (fd < 0) {
            throw new BpfException("cannot open a cpu-clock sampler on CPU " + cpu + ": " + LibBpf.strerror(-fd));
        }
        MemorySegment link;
        int err;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocate(arena);
            link = (MemorySegment) LibBpf.bpf_program__attach_perf_event$handle().invokeExact(errno,
                    object.program(PROGRAM), fd);
            err = Errno.read(errno);
        } catch (BpfException e) {
            PerfEvent.closeFd(fd);
            throw e;
        } catch (Throwable t) {
            PerfEvent.closeFd(fd);
            throw new IllegalStateException(t);
        }
        if (link.equals(MemorySegment.NULL)) {
            PerfEvent.closeFd(fd);
            throw new BpfException("cannot attach the op sampler on CPU " + cpu + ": " + LibBpf.strerror(err));
        }
        return new ClockSampleLink(link, cpu);
    }

    public int cpu() {
        return cpu;
    }

    /** Not a probe: a timer. The probes infertop says it attached are uprobes and tracepoints. */
    @Override
    public int probeCount() {
        return 0;
    }

    @Override
    public synchronized void close() {
        link = ProbeLink.destroy(link);
    }
}
