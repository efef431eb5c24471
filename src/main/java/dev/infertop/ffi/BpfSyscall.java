package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The bpf(2) commands libbpf 1.1.2 (Debian 12's, the oldest infertop supports) has no wrapper for: creating an
 * uprobe-multi link (Linux 6.6+), which attaches one program at many offsets of one file and, closed, unregisters
 * them all before waiting for one grace period (a perf-event uprobe waits once per probe). Called through
 * syscall(2). The constants are the kernel's (linux/bpf.h of 6.6+, or the kernel's BTF); Debian 12's installed
 * header predates them, hence numbers here.
 */
public final class BpfSyscall {
    private BpfSyscall() {}

    private static final Linker LINKER = Linker.nativeLinker();

    // syscall(2): long syscall(long number, ...); here bpf(int cmd, union bpf_attr *attr, unsigned int size)
    private static final MethodHandle syscall = LINKER.downcallHandle(
            LINKER.defaultLookup().find("syscall").orElseThrow(() -> new NativeLibraryMissing("libc lacks syscall")),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT),
            Linker.Option.firstVariadicArg(1), Errno.CAPTURE);

    // enum bpf_cmd
    static final int BPF_PROG_LOAD = 5;
    static final int BPF_LINK_CREATE = 28;
    /** enum bpf_attach_type: BPF_TRACE_UPROBE_MULTI (Linux 6.6; not in Debian 12's linux/bpf.h). */
    public static final int BPF_TRACE_UPROBE_MULTI = 48;
    /** link_create.uprobe_multi.flags: the offsets are uretprobes. */
    static final int BPF_F_UPROBE_MULTI_RETURN = 1;

    /** union bpf_attr's size as passed: every field used here fits, the rest the kernel reads as zero. */
    private static final int ATTR_BYTES = 128;

    // union bpf_attr, the link_create struct: prog_fd, target_fd, attach_type, flags, then uprobe_multi's
    // path, offsets, ref_ctr_offsets, cookies (u64 each), cnt, flags, pid (u32 each)
    private static final long LINK_PROG_FD = 0;
    private static final long LINK_ATTACH_TYPE = 8;
    private static final long UPROBE_MULTI_PATH = 16;
    private static final long UPROBE_MULTI_OFFSETS = 24;
    private static final long UPROBE_MULTI_CNT = 48;
    private static final long UPROBE_MULTI_FLAGS = 52;
    private static final long UPROBE_MULTI_PID = 56;

    // union bpf_attr, the prog_load struct: prog_type, insn_cnt, insns (u64), license (u64), ...,
    // expected_attach_type at 68
    private static final long LOAD_PROG_TYPE = 0;
    private static final long LOAD_INSN_CNT = 4;
    private static final long LOAD_INSNS = 8;
    private static final long LOAD_LICENSE = 16;
    private static final long LOAD_EXPECTED_ATTACH_TYPE = 68;

    private static long bpf(int command, MemorySegment attr, MemorySegment errno) {
        try {
            return (long) syscall.invokeExact(errno, syscallNumber(), command, attr, ATTR_BYTES);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The syscall number of bpf on this JVM's architecture. */
    static long syscallNumber() {
        String arch = System.getProperty("os.arch");
        return switch (arch) {
            case "amd64", "x86_64" -> 321;
            case "aarch64", "arm64" -> 280;
            default -> throw new IllegalStateException("bpf's syscall number is not known for " + arch);
        };
    }

    /**
     * BPF_LINK_CREATE of an uprobe-multi link: {@code programFd} at each of {@code fileOffsets} in the file
     * {@code path} resolves to (the kernel follows links, and takes only a regular file), in process {@code pid}
     * only (-1 would be every process; the kernel of 6.6–6.8 filtered by thread). Returns the link's fd, or
     * -errno.
     */
    public static int createUprobeMultiLink(int programFd, String path, long[] fileOffsets, boolean retprobes,
                                            int pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ATTR_BYTES, 8);
            MemorySegment offsets = arena.allocateFrom(ValueLayout.JAVA_LONG, fileOffsets);
            attr.set(JAVA_INT, LINK_PROG_FD, programFd);
            attr.set(JAVA_INT, LINK_ATTACH_TYPE, BPF_TRACE_UPROBE_MULTI);
            attr.set(JAVA_LONG, UPROBE_MULTI_PATH, arena.allocateFrom(path).address());
            attr.set(JAVA_LONG, UPROBE_MULTI_OFFSETS, offsets.address());
            attr.set(JAVA_INT, UPROBE_MULTI_CNT, fileOffsets.length);
            attr.set(JAVA_INT, UPROBE_MULTI_FLAGS, retprobes ? BPF_F_UPROBE_MULTI_RETURN : 0);
            attr.set(JAVA_INT, UPROBE_MULTI_PID, pid);
            MemorySegment errno = Errno.allocate(arena);
            long fd = bpf(BPF_LINK_CREATE, attr, errno);
            return fd >= 0 ? (int) fd : -Errno.read(errno);
        }
    }

    /**
     * BPF_PROG_LOAD of the smallest kprobe-type program ({@code r0 = 0; exit}) with {@code expectedAttachType}:
     * a feature probe. Returns its fd, or -errno.
     */
    public static int loadEmptyKprobeProgram(int expectedAttachType) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ATTR_BYTES, 8);
            // struct bpf_insn {u8 code; u8 dst:4, src:4; s16 off; s32 imm}: BPF_ALU64|BPF_MOV|BPF_K r0 = 0, BPF_EXIT
            MemorySegment insns = arena.allocateFrom(ValueLayout.JAVA_LONG, 0xb7L, 0x95L);
            attr.set(JAVA_INT, LOAD_PROG_TYPE, LibBpf.BPF_PROG_TYPE_KPROBE);
            attr.set(JAVA_INT, LOAD_INSN_CNT, 2);
            attr.set(JAVA_LONG, LOAD_INSNS, insns.address());
            attr.set(JAVA_LONG, LOAD_LICENSE, arena.allocateFrom("GPL").address());
            attr.set(JAVA_INT, LOAD_EXPECTED_ATTACH_TYPE, expectedAttachType);
            MemorySegment errno = Errno.allocate(arena);
            long fd = bpf(BPF_PROG_LOAD, attr, errno);
            return fd >= 0 ? (int) fd : -Errno.read(errno);
        }
    }
}
