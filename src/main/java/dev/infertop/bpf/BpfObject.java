package dev.infertop.bpf;

import dev.infertop.ffi.BpfSyscall;
import dev.infertop.ffi.LibC;
import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * One loaded BPF object, following libbpf-bootstrap's lifecycle: open → set read-only config and map sizes
 * → load → attach (see {@link UprobeLink}) → poll → close. {@link #close()} is idempotent and safe from a
 * shutdown hook, so every exit path frees the kernel objects.
 */
public final class BpfObject implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final String name;
    private MemorySegment object;
    private boolean loaded;
    /** Whether its uprobe programs were loaded for uprobe-multi links ({@link dev.infertop.ffi.UprobeMultiSupport}). */
    private boolean uprobeMultiLinks;

    private BpfObject(String name, MemorySegment object) {
        this.name = name;
        this.object = object;
    }

    /**
     * Opens an ELF BPF object held in memory.
     *
     * @param btfCustomPath kernel BTF to relocate against instead of /sys/kernel/btf/vmlinux, or null
     */
    public static BpfObject open(String name, byte[] elf, Path btfCustomPath) throws BpfException {
        BpfObject result = new BpfObject(name, MemorySegment.NULL);
        Arena arena = result.arena;
        MemorySegment buffer = arena.allocate(elf.length, 8);
        MemorySegment.copy(elf, 0, buffer, ValueLayout.JAVA_BYTE, 0, elf.length);
        MemorySegment opts = LibBpf.OpenOpts.allocate(arena, arena.allocateFrom(name),
                btfCustomPath == null ? MemorySegment.NULL : arena.allocateFrom(btfCustomPath.toString()));
        MemorySegment errno = Errno.allocate(arena);
        MemorySegment object;
        try {
            object = (MemorySegment) LibBpf.bpf_object__open_mem$handle().invokeExact(errno, buffer, (long) elf.length, opts);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (object.equals(MemorySegment.NULL)) {
            int err = Errno.read(errno);
            result.close();
            throw new BpfException("cannot open BPF object " + name + ": " + LibBpf.strerror(err));
        }
        result.object = object;
        return result;
    }

    public String name() {
        return name;
    }

    /**
     * The object's .rodata image, writable until {@link #load()}; its layout is native/events.h
     * {@code struct probe_config}.
     */
    public MemorySegment rodata() throws BpfException {
        requireNotLoaded("rodata");
        MemorySegment map = map(".rodata");
        MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
        MemorySegment data;
        try {
            data = (MemorySegment) LibBpf.bpf_map__initial_value$handle().invokeExact(map, size);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (data.equals(MemorySegment.NULL)) {
            throw new BpfException(name + ": .rodata has no initial value");
        }
        // SAFETY: libbpf owns this buffer for the object's lifetime and reports its size through psize.
        return data.reinterpret(size.get(ValueLayout.JAVA_LONG, 0));
    }

    public void setMaxEntries(String mapName, int maxEntries) throws BpfException {
        requireNotLoaded("map sizes");
        int rc;
        try {
            rc = (int) LibBpf.bpf_map__set_max_entries$handle().invokeExact(map(mapName), maxEntries);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            throw new BpfException("cannot size map " + mapName + " to " + maxEntries + ": " + LibBpf.strerror(rc));
        }
    }

    /** Whether {@link #load()} loads this program (bpf_program__set_autoload(3)); all do by default. */
    public void setAutoload(String programName, boolean autoload) throws BpfException {
        requireNotLoaded("autoload");
        int rc;
        try {
            rc = (int) LibBpf.bpf_program__set_autoload$handle().invokeExact(program(programName), autoload);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            throw new BpfException("cannot set autoload of " + programName + ": " + LibBpf.strerror(rc));
        }
    }

    /**
     * Loads every uprobe and uretprobe program for uprobe-multi links (BPF_TRACE_UPROBE_MULTI): {@link UprobeLink}
     * then attaches each program's sites in one file as one link. Only where {@link dev.infertop.ffi.UprobeMultiSupport} says the
     * kernel has them: such a program cannot be attached through a perf event.
     */
    public void loadUprobesForMultiLinks() throws BpfException {
        requireNotLoaded("attach types");
        try {
            MemorySegment program = MemorySegment.NULL;
            while (true) {
                program = (MemorySegment) LibBpf.bpf_object__next_program$handle().invokeExact(object, program);
                if (program.equals(MemorySegment.NULL)) {
                    break;
                }
                if ((int) LibBpf.bpf_program__type$handle().invokeExact(program) != LibBpf.BPF_PROG_TYPE_KPROBE) {
                    continue;
                }
                int rc = (int) LibBpf.bpf_program__set_expected_attach_type$handle().invokeExact(program,
                        BpfSyscall.BPF_TRACE_UPROBE_MULTI);
                if (rc != 0) {
                    throw new BpfException(name + ": cannot set a program's attach type: " + LibBpf.strerror(-rc));
                }
            }
        } catch (BpfException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        uprobeMultiLinks = true;
    }

    /** Whether its uprobes attach as uprobe-multi links (else one perf event each). */
    public boolean uprobeMultiLinks() {
        return uprobeMultiLinks;
    }

    public void load() throws BpfException {
        requireNotLoaded("load");
        int rc;
        try {
            rc = (int) LibBpf.bpf_object__load$handle().invokeExact(object);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            int err = -rc;
            boolean privileged = LibC.geteuid() == 0;
            String hint = (err == Errno.EPERM || err == Errno.EACCES) && !privileged
                    ? " (needs root, or CAP_BPF and CAP_PERFMON)"
                    : " (rejected by this kernel; set INFERTOP_LIBBPF_DEBUG=1 to see the verifier's log)";
            throw new BpfException("cannot load BPF object " + name + ": " + LibBpf.strerror(err) + hint);
        }
        loaded = true;
    }

    public MemorySegment program(String programName) throws BpfException {
        MemorySegment program;
        try (Arena local = Arena.ofConfined()) {
            program = (MemorySegment) LibBpf.bpf_object__find_program_by_name$handle().invokeExact(
                    requireOpen(), local.allocateFrom(programName));
        } catch (BpfException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (program.equals(MemorySegment.NULL)) {
            throw new BpfException(name + " has no program " + programName);
        }
        return program;
    }

    public MemorySegment map(String mapName) throws BpfException {
        MemorySegment map;
        try (Arena local = Arena.ofConfined()) {
            map = (MemorySegment) LibBpf.bpf_object__find_map_by_name$handle().invokeExact(
                    requireOpen(), local.allocateFrom(mapName));
        } catch (BpfException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (map.equals(MemorySegment.NULL)) {
            throw new BpfException(name + " has no map " + mapName);
        }
        return map;
    }

    public int mapFd(String mapName) throws BpfException {
        if (!loaded) {
            throw new BpfException(name + ": map " + mapName + " has no fd before load");
        }
        try {
            return (int) LibBpf.bpf_map__fd$handle().invokeExact(map(mapName));
        } catch (BpfException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The u64 value of an int {@code key} (a slot of an array map); empty where the map has none. */
    public java.util.OptionalLong lookupLong(String mapName, int key) throws BpfException {
        int fd = mapFd(mapName);
        try (Arena local = Arena.ofConfined()) {
            MemorySegment keySegment = local.allocate(ValueLayout.JAVA_INT);
            keySegment.set(ValueLayout.JAVA_INT, 0, key);
            MemorySegment value = local.allocate(ValueLayout.JAVA_LONG);
            int rc = (int) LibBpf.bpf_map_lookup_elem$handle().invokeExact(fd, keySegment, value);
            return rc == 0 ? java.util.OptionalLong.of(value.get(ValueLayout.JAVA_LONG, 0)) : java.util.OptionalLong.empty();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Writes the value of an int {@code key}: a slot of an array map, or an entry of a hash map. */
    public void updateElement(String mapName, int key, MemorySegment value) throws BpfException {
        int fd = mapFd(mapName);
        int rc;
        try (Arena local = Arena.ofConfined()) {
            MemorySegment keySegment = local.allocate(ValueLayout.JAVA_INT);
            keySegment.set(ValueLayout.JAVA_INT, 0, key);
            rc = (int) LibBpf.bpf_map_update_elem$handle().invokeExact(fd, keySegment, value, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            throw new BpfException("cannot update map " + mapName + ": " + LibBpf.strerror(rc));
        }
    }

    /** Writes the value of a {@code key} of any size (a struct key of a hash map). */
    public void updateElement(String mapName, MemorySegment key, MemorySegment value) throws BpfException {
        int fd = mapFd(mapName);
        int rc;
        try {
            rc = (int) LibBpf.bpf_map_update_elem$handle().invokeExact(fd, key, value, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            throw new BpfException("cannot update map " + mapName + ": " + LibBpf.strerror(rc));
        }
    }

    private MemorySegment requireOpen() throws BpfException {
        if (object.equals(MemorySegment.NULL)) {
            throw new BpfException(name + " is closed");
        }
        return object;
    }

    private void requireNotLoaded(String what) throws BpfException {
        requireOpen();
        if (loaded) {
            throw new BpfException(name + ": cannot change " + what + " after load");
        }
    }

    @Override
    public synchronized void close() {
        if (!object.equals(MemorySegment.NULL)) {
            try {
                LibBpf.bpf_object__close$handle().invokeExact(object);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            object = MemorySegment.NULL;
        }
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
