package dev.infertop.bpf;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;
import dev.infertop.process.MappedFile;
import dev.infertop.process.MemoryMapping;

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
     * A probe in the file {@code mappedAs} shows the target mapped (when not null; else as
     * {@link #attach(MemorySegment, int, Path, long, boolean)}), never in what {@code file} names by then.
     *
     * <p>libbpf hands the kernel a path, which the kernel resolves once (following links) to an inode: it opens
     * nothing and refuses anything but a regular file. Where {@code file} still names the mapped file (no link at
     * its end, its device and inode) that path is given, so that {@code bpftool perf show} names the library;
     * where it does not (swapped for a link or another file), or the attach by it failed (swapped meanwhile),
     * the kernel is given {@code /proc/self/fd/N} of an O_PATH descriptor of the mapped file itself, found
     * through /proc/PID/map_files, which resolves to that inode whatever any name names.
     */
    public static UprobeLink attach(MemorySegment program, int pid, Path file, MemoryMapping mappedAs,
                                    long fileOffset, boolean retprobe) throws BpfException {
        if (mappedAs == null) {
            return attach(program, pid, file, fileOffset, retprobe);
        }
        if (MappedFile.namesMappedFile(file, mappedAs)) {
            try {
                return attach(program, pid, file, fileOffset, retprobe);
            } catch (BpfException e) {
                // swapped between the check and the kernel's lookup, or another failure: by the mapped file
            }
        }
        int named;
        try {
            named = MappedFile.named(file, mappedAs);
        } catch (java.io.IOException e) {
            throw new BpfException("cannot attach " + (retprobe ? "uretprobe" : "uprobe") + " at " + file + "+0x"
                    + Long.toHexString(fileOffset) + ": " + e.getMessage());
        }
        try {
            return attachAt(program, pid, Path.of("/proc/self/fd/" + named), file, fileOffset, retprobe);
        } finally {
            dev.infertop.ffi.LibC.closeQuietly(named); // the kernel holds the inode now
        }
    }

    /**
     * @param pid        only this process is probed (-1: every process mapping the file)
     * @param fileOffset offset of the probed instruction in {@code file} (not a virtual address)
     */
    public static UprobeLink attach(MemorySegment program, int pid, Path file, long fileOffset, boolean retprobe)
            throws BpfException {
        return attachAt(program, pid, file, file, fileOffset, retprobe);
    }

    /** {@code resolved} is the path the kernel resolves; {@code file} the library as messages name it. */
    private static UprobeLink attachAt(MemorySegment program, int pid, Path resolved, Path file, long fileOffset,
                                       boolean retprobe) throws BpfException {
        MemorySegment link;
        int err;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocate(arena);
            MemorySegment opts = LibBpf.UprobeOpts.allocate(arena, retprobe, 0L);
            link = (MemorySegment) LibBpf.bpf_program__attach_uprobe_opts$handle().invokeExact(
                    errno, program, pid, arena.allocateFrom(resolved.toString()), fileOffset, opts);
            err = Errno.read(errno);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (link.equals(MemorySegment.NULL)) {
            String what = retprobe ? "uretprobe" : "uprobe";
            String hint = err == Errno.ESRCH ? " (the process is gone)" : "";
            String through = resolved.equals(file) ? "" : " (through the file the process maps)";
            throw new BpfException("cannot attach " + what + " at " + file + "+0x" + Long.toHexString(fileOffset)
                    + through + ": " + LibBpf.strerror(err) + hint);
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
