package dev.infertop.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Hand-written FFM bindings to the system libbpf ({@code libbpf.so.1}), in the style jextract generates
 * (jextract is not obtainable from the registries this project builds from). Only the functions infertop
 * calls are bound. Every handle is created once, at class load; callers use {@code invokeExact}.
 * Functions that report failure through errno take a leading capture-state segment ({@link Errno}).
 *
 * <p>libbpf 1.1 (Debian 12) is the floor: every symbol and struct layout here exists there.
 */
public final class LibBpf {
    private LibBpf() {}

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIB = load();

    private static SymbolLookup load() {
        try {
            return SymbolLookup.libraryLookup("libbpf.so.1", Arena.global());
        } catch (IllegalArgumentException e) {
            throw new NativeLibraryMissing("libbpf.so.1 is not installed: apt-get install -y libbpf1");
        }
    }

    private static MethodHandle bind(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment symbol = LIB.find(name).orElseThrow(() -> new NativeLibraryMissing(
                "libbpf.so.1 lacks " + name + ": infertop needs libbpf 1.1 or newer"));
        return LINKER.downcallHandle(symbol, descriptor, options);
    }

    /** struct bpf_object_open_opts (libbpf.h, 1.1 layout; sz tells newer libbpf which fields we know). */
    public static final class OpenOpts {
        private OpenOpts() {}

        public static final StructLayout LAYOUT = MemoryLayout.structLayout(
                JAVA_LONG.withName("sz"),
                ADDRESS.withName("object_name"),
                JAVA_BOOLEAN.withName("relaxed_maps"),
                MemoryLayout.paddingLayout(7),
                ADDRESS.withName("pin_root_path"),
                JAVA_INT.withName("attach_prog_fd_stub"),
                MemoryLayout.paddingLayout(4),
                ADDRESS.withName("kconfig"),
                ADDRESS.withName("btf_custom_path"),
                ADDRESS.withName("kernel_log_buf"),
                JAVA_LONG.withName("kernel_log_size"),
                JAVA_INT.withName("kernel_log_level"),
                MemoryLayout.paddingLayout(4)).withName("bpf_object_open_opts");

        private static final VarHandle SZ = field("sz");
        private static final VarHandle OBJECT_NAME = field("object_name");
        private static final VarHandle BTF_CUSTOM_PATH = field("btf_custom_path");

        private static VarHandle field(String name) {
            return LAYOUT.varHandle(MemoryLayout.PathElement.groupElement(name));
        }

        public static MemorySegment allocate(Arena arena, MemorySegment objectName, MemorySegment btfCustomPath) {
            MemorySegment opts = arena.allocate(LAYOUT);
            SZ.set(opts, 0L, LAYOUT.byteSize());
            OBJECT_NAME.set(opts, 0L, objectName);
            BTF_CUSTOM_PATH.set(opts, 0L, btfCustomPath);
            return opts;
        }
    }

    /** struct bpf_uprobe_opts (libbpf.h). */
    public static final class UprobeOpts {
        private UprobeOpts() {}

        public static final StructLayout LAYOUT = MemoryLayout.structLayout(
                JAVA_LONG.withName("sz"),
                JAVA_LONG.withName("ref_ctr_offset"),
                JAVA_LONG.withName("bpf_cookie"),
                JAVA_BOOLEAN.withName("retprobe"),
                MemoryLayout.paddingLayout(7),
                ADDRESS.withName("func_name")).withName("bpf_uprobe_opts");

        private static final VarHandle SZ = LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("sz"));
        private static final VarHandle COOKIE = LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("bpf_cookie"));
        private static final VarHandle RETPROBE = LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("retprobe"));

        public static MemorySegment allocate(Arena arena, boolean retprobe, long cookie) {
            MemorySegment opts = arena.allocate(LAYOUT);
            SZ.set(opts, 0L, LAYOUT.byteSize());
            COOKIE.set(opts, 0L, cookie);
            RETPROBE.set(opts, 0L, retprobe);
            return opts;
        }
    }

    // struct bpf_object *bpf_object__open_mem(const void *obj_buf, size_t obj_buf_sz, const struct bpf_object_open_opts *opts)
    // Returns NULL and sets errno on error (libbpf 1.0 semantics).
    public static final MethodHandle bpf_object__open_mem = bind("bpf_object__open_mem",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS), Errno.CAPTURE);

    // int bpf_object__load(struct bpf_object *obj); returns -errno
    public static final MethodHandle bpf_object__load = bind("bpf_object__load",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));

    // void bpf_object__close(struct bpf_object *obj)
    public static final MethodHandle bpf_object__close = bind("bpf_object__close",
            FunctionDescriptor.ofVoid(ADDRESS));

    // struct bpf_program *bpf_object__find_program_by_name(const struct bpf_object *obj, const char *name)
    public static final MethodHandle bpf_object__find_program_by_name = bind("bpf_object__find_program_by_name",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));

    // struct bpf_map *bpf_object__find_map_by_name(const struct bpf_object *obj, const char *name)
    public static final MethodHandle bpf_object__find_map_by_name = bind("bpf_object__find_map_by_name",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));

    // int bpf_map__fd(const struct bpf_map *map)
    public static final MethodHandle bpf_map__fd = bind("bpf_map__fd",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));

    // int bpf_map__set_max_entries(struct bpf_map *map, __u32 max_entries); returns -errno
    public static final MethodHandle bpf_map__set_max_entries = bind("bpf_map__set_max_entries",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    // const void *bpf_map__initial_value(struct bpf_map *map, size_t *psize)
    public static final MethodHandle bpf_map__initial_value = bind("bpf_map__initial_value",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));

    // int bpf_program__set_autoload(struct bpf_program *prog, bool autoload)
    public static final MethodHandle bpf_program__set_autoload = bind("bpf_program__set_autoload",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BOOLEAN));

    // struct bpf_link *bpf_program__attach_uprobe_opts(const struct bpf_program *prog, pid_t pid,
    //         const char *binary_path, size_t func_offset, const struct bpf_uprobe_opts *opts)
    // Returns NULL and sets errno on error.
    public static final MethodHandle bpf_program__attach_uprobe_opts = bind("bpf_program__attach_uprobe_opts",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS), Errno.CAPTURE);

    // struct bpf_link *bpf_program__attach(const struct bpf_program *prog)
    // Attaches by the program's section (tp_btf/..., raw_tp/...); returns NULL and sets errno on error.
    public static final MethodHandle bpf_program__attach = bind("bpf_program__attach",
            FunctionDescriptor.of(ADDRESS, ADDRESS), Errno.CAPTURE);

    // int bpf_program__fd(const struct bpf_program *prog): the loaded program's fd, or -errno
    public static final MethodHandle bpf_program__fd = bind("bpf_program__fd",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));

    // int bpf_enable_stats(enum bpf_stats_type type): an fd that keeps run-time stats on while open (Linux 5.8+);
    // -errno on error. BPF_STATS_RUN_TIME = 0.
    public static final MethodHandle bpf_enable_stats = bind("bpf_enable_stats",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    public static final int BPF_STATS_RUN_TIME = 0;

    // int bpf_obj_get_info_by_fd(int bpf_fd, void *info, __u32 *info_len); -errno on error
    public static final MethodHandle bpf_obj_get_info_by_fd = bind("bpf_obj_get_info_by_fd",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));

    /**
     * The part of struct bpf_prog_info (linux/bpf.h) infertop reads: a program's run count and run time, kept
     * by the kernel while run-time stats are on (BpfProgInfoTest checks the offsets against the header).
     */
    public static final class ProgInfo {
        private ProgInfo() {}

        public static final long RUN_TIME_NS = 192;
        public static final long RUN_CNT = 200;
        /** Bytes asked for: up to and including run_cnt; the kernel fills what it knows and zeroes the rest. */
        public static final int SIZE = 208;
    }

    // int bpf_link__destroy(struct bpf_link *link)
    public static final MethodHandle bpf_link__destroy = bind("bpf_link__destroy",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));

    // libbpf_print_fn_t libbpf_set_print(libbpf_print_fn_t fn): NULL silences libbpf's own stderr output.
    public static final MethodHandle libbpf_set_print = bind("libbpf_set_print",
            FunctionDescriptor.of(ADDRESS, ADDRESS));

    // int libbpf_strerror(int err, char *buf, size_t size)
    public static final MethodHandle libbpf_strerror = bind("libbpf_strerror",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));

    // int libbpf_num_possible_cpus(void)
    public static final MethodHandle libbpf_num_possible_cpus = bind("libbpf_num_possible_cpus",
            FunctionDescriptor.of(JAVA_INT));

    // int bpf_map_lookup_elem(int fd, const void *key, void *value); returns -errno (libbpf 1.0 mode)
    public static final MethodHandle bpf_map_lookup_elem = bind("bpf_map_lookup_elem",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));

    // int bpf_map_update_elem(int fd, const void *key, const void *value, __u64 flags); returns -errno
    public static final MethodHandle bpf_map_update_elem = bind("bpf_map_update_elem",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));

    // int bpf_map_delete_elem(int fd, const void *key); returns -errno
    public static final MethodHandle bpf_map_delete_elem = bind("bpf_map_delete_elem",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    // struct btf *btf__parse(const char *path, struct btf_ext **btf_ext); NULL and errno on error
    public static final MethodHandle btf__parse = bind("btf__parse",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), Errno.CAPTURE);

    // void btf__free(struct btf *btf)
    public static final MethodHandle btf__free = bind("btf__free", FunctionDescriptor.ofVoid(ADDRESS));

    static {
        // libbpf prints its own diagnostics to stderr by default; infertop reports one line instead.
        if (System.getenv("INFERTOP_LIBBPF_DEBUG") == null) {
            try {
                MemorySegment ignored = (MemorySegment) libbpf_set_print.invokeExact(MemorySegment.NULL);
            } catch (Throwable t) {
                throw new ExceptionInInitializerError(t);
            }
        }
    }

    /** libbpf's message for a (positive or negative) error code. */
    public static String strerror(int err) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(256);
            int ignored = (int) libbpf_strerror.invokeExact(Math.abs(err), buf, 256L);
            return buf.getString(0);
        } catch (Throwable t) {
            return "error " + err;
        }
    }

}
