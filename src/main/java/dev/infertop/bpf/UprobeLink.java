package dev.infertop.bpf;

import dev.infertop.ffi.BpfSyscall;
import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;
import dev.infertop.ffi.LibC;
import dev.infertop.process.MappedFile;
import dev.infertop.process.MemoryMapping;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Attached uprobes or uretprobes of one program in one file. Where the object's programs were loaded for
 * uprobe-multi links ({@link BpfObject#uprobeMultiLinks()}) it is one such link over every offset (it shows in
 * {@code bpftool link show}), else one perf event per offset, attached by libbpf (it shows in
 * {@code bpftool perf show}). Closing it detaches its probes from the target at once: an uprobe-multi link
 * unregisters all of them, then waits for one grace period, where each perf event waits for its own.
 */
public final class UprobeLink implements ProbeLink {
    /** The libbpf link of a perf-event uprobe; NULL for an uprobe-multi link, or once closed. */
    private MemorySegment perfLink;
    /** The fd of an uprobe-multi link; -1 for a perf-event uprobe, or once closed. */
    private int multiLinkFd;
    private final Path file;
    private final long[] fileOffsets;
    private final boolean retprobe;

    private UprobeLink(MemorySegment perfLink, int multiLinkFd, Path file, long[] fileOffsets, boolean retprobe) {
        this.perfLink = perfLink;
        this.multiLinkFd = multiLinkFd;
        this.file = file;
        this.fileOffsets = fileOffsets;
        this.retprobe = retprobe;
    }

    /**
     * Attaches {@code program} at every one of {@code fileOffsets} in {@code file}: one uprobe-multi link where
     * the object was loaded for them, else one perf-event link per offset (all or none: a failure closes those
     * made). See {@link #attach(MemorySegment, int, Path, MemoryMapping, long, boolean)} for which file it is.
     */
    public static List<UprobeLink> attachAll(BpfObject object, MemorySegment program, int pid, Path file,
                                             MemoryMapping mappedAs, long[] fileOffsets, boolean retprobe)
            throws BpfException {
        if (object.uprobeMultiLinks()) {
            return List.of(attachChecked(resolved -> attachMultiAt(program, pid, resolved, file, fileOffsets,
                    retprobe), file, mappedAs, fileOffsets[0], retprobe));
        }
        List<UprobeLink> made = new ArrayList<>(fileOffsets.length);
        try {
            for (long fileOffset : fileOffsets) {
                made.add(attach(program, pid, file, mappedAs, fileOffset, retprobe));
            }
        } catch (BpfException | RuntimeException e) {
            LinkCloser.closeAll(made);
            throw e;
        }
        return made;
    }

    /**
     * A perf-event probe in the file {@code mappedAs} shows the target mapped (when not null; else as
     * {@link #attach(MemorySegment, int, Path, long, boolean)}), never in what {@code file} names by then.
     *
     * <p>The kernel is handed a path, which it resolves once (following links) to an inode: it opens nothing and
     * refuses anything but a regular file. Where {@code file} still names the mapped file (no link at its end,
     * its device and inode) that path is given, so that {@code bpftool perf show} names the library; where it
     * does not (swapped for a link or another file), or the attach by it failed (swapped meanwhile), the kernel
     * is given {@code /proc/self/fd/N} of an O_PATH descriptor of the mapped file itself, found through
     * /proc/PID/map_files, which resolves to that inode whatever any name names.
     */
    public static UprobeLink attach(MemorySegment program, int pid, Path file, MemoryMapping mappedAs,
                                    long fileOffset, boolean retprobe) throws BpfException {
        return attachChecked(resolved -> attachPerfAt(program, pid, resolved, file, fileOffset, retprobe), file,
                mappedAs, fileOffset, retprobe);
    }

    /** Attaches through the path the kernel is to resolve. */
    @FunctionalInterface
    private interface AttachBy {
        UprobeLink attach(Path resolved) throws BpfException;
    }

    /** The by-descriptor safety of {@link #attach(MemorySegment, int, Path, MemoryMapping, long, boolean)}. */
    private static UprobeLink attachChecked(AttachBy attach, Path file, MemoryMapping mappedAs, long fileOffset,
                                            boolean retprobe) throws BpfException {
        if (mappedAs == null) {
            return attach.attach(file);
        }
        if (MappedFile.namesMappedFile(file, mappedAs)) {
            try {
                return attach.attach(file);
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
            return attach.attach(Path.of("/proc/self/fd/" + named));
        } finally {
            LibC.closeQuietly(named); // the kernel holds the inode now
        }
    }

    /**
     * @param pid        only this process is probed (-1: every process mapping the file)
     * @param fileOffset offset of the probed instruction in {@code file} (not a virtual address)
     */
    public static UprobeLink attach(MemorySegment program, int pid, Path file, long fileOffset, boolean retprobe)
            throws BpfException {
        return attachPerfAt(program, pid, file, file, fileOffset, retprobe);
    }

    /** {@code resolved} is the path the kernel resolves; {@code file} the library as messages name it. */
    private static UprobeLink attachPerfAt(MemorySegment program, int pid, Path resolved, Path file,
                                           long fileOffset, boolean retprobe) throws BpfException {
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
            throw failed(resolved, file, new long[] {fileOffset}, retprobe, err);
        }
        return new UprobeLink(link, -1, file, new long[] {fileOffset}, retprobe);
    }

    private static UprobeLink attachMultiAt(MemorySegment program, int pid, Path resolved, Path file,
                                            long[] fileOffsets, boolean retprobe) throws BpfException {
        int programFd;
        try {
            programFd = (int) LibBpf.bpf_program__fd$handle().invokeExact(program);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (programFd < 0) {
            throw failed(resolved, file, fileOffsets, retprobe, -programFd);
        }
        int fd = BpfSyscall.createUprobeMultiLink(programFd, resolved.toString(), fileOffsets, retprobe, pid);
        if (fd < 0) {
            throw failed(resolved, file, fileOffsets, retprobe, -fd);
        }
        return new UprobeLink(MemorySegment.NULL, fd, file, fileOffsets.clone(), retprobe);
    }

    private static BpfException failed(Path resolved, Path file, long[] fileOffsets, boolean retprobe, int err) {
        String what = (retprobe ? "uretprobe" : "uprobe") + (fileOffsets.length == 1 ? "" : "s");
        String hint = err == Errno.ESRCH ? " (the process is gone)" : "";
        String through = resolved.equals(file) ? "" : " (through the file the process maps)";
        List<String> at = new ArrayList<>();
        for (long offset : fileOffsets) {
            at.add("0x" + Long.toHexString(offset));
        }
        return new BpfException("cannot attach " + what + " at " + file + "+" + String.join(",", at) + through + ": "
                + LibBpf.strerror(err) + hint);
    }

    public Path file() {
        return file;
    }

    /** Where its probes are in {@link #file()}: one offset for a perf-event link, any number for a multi link. */
    public long[] fileOffsets() {
        return fileOffsets.clone();
    }

    public boolean retprobe() {
        return retprobe;
    }

    @Override
    public int probeCount() {
        return fileOffsets.length;
    }

    @Override
    public synchronized void close() {
        perfLink = ProbeLink.destroy(perfLink);
        if (multiLinkFd >= 0) {
            LibC.closeQuietly(multiLinkFd); // its last reference: the kernel detaches every offset before it returns
            multiLinkFd = -1;
        }
    }
}
