package dev.infertop.bpf;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One attached tracepoint program (tp_btf/NAME): a BPF link the kernel lists in {@code bpftool link show}.
 * It fires machine-wide; the program filters the target itself. Closing it detaches it at once.
 */
public final class TracepointLink implements ProbeLink {
    private MemorySegment link;
    private final String tracepoint;

    private TracepointLink(MemorySegment link, String tracepoint) {
        this.link = link;
        this.tracepoint = tracepoint;
    }

    /** Attaches {@code program} where its section says (bpf_program__attach(3)). */
    public static TracepointLink attach(MemorySegment program, String tracepoint) throws BpfException {
        MemorySegment link;
        int err;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocate(arena);
            link = (MemorySegment) LibBpf.bpf_program__attach$handle().invokeExact(errno, program);
            err = Errno.read(errno);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (link.equals(MemorySegment.NULL)) {
            throw new BpfException("cannot attach to tracepoint " + tracepoint + ": " + LibBpf.strerror(err));
        }
        return new TracepointLink(link, tracepoint);
    }

    public String tracepoint() {
        return tracepoint;
    }

    @Override
    public synchronized void close() {
        link = ProbeLink.destroy(link);
    }
}
