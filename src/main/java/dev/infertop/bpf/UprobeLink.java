package dev.infertop.bpf;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * One attached uprobe or uretprobe (libbpf attaches it through perf_event_open, so it shows in
 * {@code bpftool perf show}, not in tracefs). Closing it detaches the probe from the target at once.
 */
public final class UprobeLink implements ProbeLink {
    private MemorySegment link;
    private final Path file;
    private final long fileOffset;
    private final boolean retprobe;

    private UprobeLink(MemorySegment link, Path file, long fileOffset, boolean retprobe) {
        this.link = link;
        this.file = file;
        this.fileOffset = fileOffset;
        this.retprobe = retprobe;
    }

    /**
     * @param pid        only this process is probed (-1: every process mapping the file)
     * @param fileOffset offset of the probed instruction in {@code file} (not a virtual address)
     */
    public static UprobeLink attach(MemorySegment program, int pid, Path file, long fileOffset, boolean retprobe)
            throws BpfException {
        MemorySegment link;
        int err;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocate(arena);
            MemorySegment opts = LibBpf.UprobeOpts.allocate(arena, retprobe, 0L);
            link = (MemorySegment) LibBpf.bpf_program__attach_uprobe_opts$handle().invokeExact(
                    errno, program, pid, arena.allocateFrom(file.toString()), fileOffset, opts);
            err = Errno.read(errno);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (link.equals(MemorySegment.NULL)) {
            String what = retprobe ? "uretprobe" : "uprobe";
            String hint = err == Errno.ESRCH ? " (the process is gone)" : "";
            throw new BpfException("cannot attach " + what + " at " + file + "+0x" + Long.toHexString(fileOffset)
                    + ": " + LibBpf.strerror(err) + hint);
        }
        return new UprobeLink(link, file, fileOffset, retprobe);
    }

    public Path file() {
        return file;
    }

    public long fileOffset() {
        return fileOffset;
    }

    public boolean retprobe() {
        return retprobe;
    }

    @Override
    public synchronized void close() {
        link = ProbeLink.destroy(link);
    }
}
