package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * perf_event_open(2), which glibc does not wrap: called through syscall(2). One counting event per call, with
 * {@link Attr} the part of struct perf_event_attr infertop sets (PerfEventAttrTest checks it against
 * linux/perf_event.h).
 */
public final class PerfEvent {
    private PerfEvent() {}

    private static final Linker LINKER = Linker.nativeLinker();

    private static MethodHandle bind(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment symbol = LINKER.defaultLookup().find(name)
                .orElseThrow(() -> new NativeLibraryMissing("libc lacks " + name));
        return LINKER.downcallHandle(symbol, descriptor, options);
    }

    // syscall(2): long syscall(long number, ...); here perf_event_open(attr, pid, cpu, group_fd, flags)
    public static final MethodHandle syscall = bind("syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG),
            Linker.Option.firstVariadicArg(1), Errno.CAPTURE);

    // read(2): ssize_t read(int fd, void *buf, size_t count)
    private static final MethodHandle readHandle = bind("read",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));

    /** read(2) of a counting event into {@code buffer}: the bytes read, or -1. */
    public static long read(int fd, MemorySegment buffer) {
        try {
            return (long) readHandle.invokeExact(fd, buffer, buffer.byteSize());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    // close(2): int close(int fd)
    public static final MethodHandle close = bind("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    // enum perf_type_id
    public static final int TYPE_HARDWARE = 0;
    public static final int TYPE_SOFTWARE = 1;
    public static final int TYPE_HW_CACHE = 3;
    public static final int TYPE_RAW = 4;

    // enum perf_sw_ids
    public static final long SW_CPU_CLOCK = 0;

    // perf_event_attr.read_format
    public static final long FORMAT_TOTAL_TIME_ENABLED = 1;
    public static final long FORMAT_TOTAL_TIME_RUNNING = 2;

    // perf_event_open flags
    public static final long FLAG_FD_CLOEXEC = 8;

    public static final int ENODEV = 19;
    public static final int EOPNOTSUPP = 95;

    /** The syscall number of perf_event_open on this JVM's architecture. */
    public static long syscallNumber() {
        String arch = System.getProperty("os.arch");
        return switch (arch) {
            case "amd64", "x86_64" -> 298;
            case "aarch64", "arm64" -> 241;
            default -> throw new IllegalStateException("perf_event_open's number is not known for " + arch);
        };
    }

    /** struct perf_event_attr up to PERF_ATTR_SIZE_VER5 (112 bytes, Linux 4.1+): what the kernel reads. */
    public static final class Attr {
        private Attr() {}

        public static final StructLayout LAYOUT = MemoryLayout.structLayout(
                JAVA_INT.withName("type"),
                JAVA_INT.withName("size"),
                JAVA_LONG.withName("config"),
                JAVA_LONG.withName("sample_period"),
                JAVA_LONG.withName("sample_type"),
                JAVA_LONG.withName("read_format"),
                JAVA_LONG.withName("flags"), // the bit fields: disabled:1, inherit:1, pinned:1, exclusive:1, ...
                JAVA_INT.withName("wakeup_events"),
                JAVA_INT.withName("bp_type"),
                JAVA_LONG.withName("config1"),
                JAVA_LONG.withName("config2"),
                JAVA_LONG.withName("branch_sample_type"),
                JAVA_LONG.withName("sample_regs_user"),
                JAVA_INT.withName("sample_stack_user"),
                JAVA_INT.withName("clockid"),
                JAVA_LONG.withName("sample_regs_intr"),
                JAVA_INT.withName("aux_watermark"),
                JAVA_SHORT.withName("sample_max_stack"),
                JAVA_SHORT.withName("reserved_2"));

        public static final long TYPE = offset("type");
        public static final long SIZE = offset("size");
        public static final long CONFIG = offset("config");
        public static final long READ_FORMAT = offset("read_format");
        public static final long FLAGS = offset("flags");
        public static final long CONFIG1 = offset("config1");
        public static final long CONFIG2 = offset("config2");

        /** Bit of {@code disabled} in the flags word (bit fields are allocated from bit 0 on both ABIs). */
        public static final long FLAG_DISABLED = 1L;
        /** {@code inherit}: must stay 0 for an event in a BPF perf event array. */
        public static final long FLAG_INHERIT = 1L << 1;
        public static final long FLAG_EXCLUDE_KERNEL = 1L << 5;
        public static final long FLAG_EXCLUDE_HV = 1L << 6;
        public static final long FLAG_EXCLUDE_IDLE = 1L << 7;
        public static final long SAMPLE_PERIOD = offset("sample_period");

        private static long offset(String field) {
            return LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement(field));
        }

        /** A counting (not sampling) event of {@code type}/{@code config}, enabled from the start. */
        public static MemorySegment counting(Arena arena, int type, long config) {
            MemorySegment attr = arena.allocate(LAYOUT);
            attr.set(JAVA_INT, TYPE, type);
            attr.set(JAVA_INT, SIZE, (int) LAYOUT.byteSize());
            attr.set(JAVA_LONG, CONFIG, config);
            attr.set(JAVA_LONG, READ_FORMAT, FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING);
            return attr;
        }
    }

    /**
     * Opens a counter on {@code cpu} for every process (pid -1). Returns the fd, or minus errno.
     * Needs CAP_PERFMON (or root, or perf_event_paranoid &lt;= 0).
     */
    public static int openOnCpu(int type, long config, int cpu) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            MemorySegment attr = Attr.counting(arena, type, config);
            long fd = (long) syscall.invokeExact(state, syscallNumber(), attr, -1, cpu, -1, FLAG_FD_CLOEXEC);
            return fd >= 0 ? (int) fd : -Errno.read(state);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Opens a cpu-clock timer on {@code cpu} for every process (pid -1) that overflows every {@code periodNs} of
     * that CPU's time while it runs user code (kernel and idle time excluded: the BPF program attached to it runs
     * only where a sample can name an op). Returns the fd, or minus errno. Needs CAP_PERFMON (or root).
     */
    public static int openClockSampler(int cpu, long periodNs) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            MemorySegment attr = arena.allocate(Attr.LAYOUT);
            attr.set(JAVA_INT, Attr.TYPE, TYPE_SOFTWARE);
            attr.set(JAVA_INT, Attr.SIZE, (int) Attr.LAYOUT.byteSize());
            attr.set(JAVA_LONG, Attr.CONFIG, SW_CPU_CLOCK);
            attr.set(JAVA_LONG, Attr.SAMPLE_PERIOD, periodNs);
            attr.set(JAVA_LONG, Attr.FLAGS, Attr.FLAG_EXCLUDE_KERNEL | Attr.FLAG_EXCLUDE_HV | Attr.FLAG_EXCLUDE_IDLE);
            long fd = (long) syscall.invokeExact(state, syscallNumber(), attr, -1, cpu, -1, FLAG_FD_CLOEXEC);
            return fd >= 0 ? (int) fd : -Errno.read(state);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    public static void closeFd(int fd) {
        try {
            int ignored = (int) close.invokeExact(fd);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** A value layout of the perf event array's value (an fd). */
    public static final ValueLayout.OfInt FD = JAVA_INT;
}
