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
 * calls are bound. As jextract does, each function's handle lives in a holder class of its own name and is
 * created at its first use ({@code NAME$handle()}): a downcall handle is dear to make before the JIT has
 * warmed up, and binding all of them at class load slowed every start, for functions a run may never call.
 * Callers use {@code invokeExact}; a symbol missing from the library is reported at that first use
 * (a {@link NativeLibraryMissing}, which Main prints as one line).
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
    private static final class bpf_object__open_mem {
        static final MethodHandle HANDLE = bind("bpf_object__open_mem",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS), Errno.CAPTURE);
    }

    public static MethodHandle bpf_object__open_mem$handle() {
        return bpf_object__open_mem.HANDLE;
    }

    // int bpf_object__load(struct bpf_object *obj); returns -errno
    private static final class bpf_object__load {
        static final MethodHandle HANDLE = bind("bpf_object__load",
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    public static MethodHandle bpf_object__load$handle() {
        return bpf_object__load.HANDLE;
    }

    // void bpf_object__close(struct bpf_object *obj)
    private static final class bpf_object__close {
        static final MethodHandle HANDLE = bind("bpf_object__close",
                FunctionDescriptor.ofVoid(ADDRESS));
    }

    public static MethodHandle bpf_object__close$handle() {
        return bpf_object__close.HANDLE;
    }

    // struct bpf_program *bpf_object__find_program_by_name(const struct bpf_object *obj, const char *name)
    private static final class bpf_object__find_program_by_name {
        static final MethodHandle HANDLE = bind("bpf_object__find_program_by_name",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    }

    public static MethodHandle bpf_object__find_program_by_name$handle() {
        return bpf_object__find_program_by_name.HANDLE;
    }

    // struct bpf_map *bpf_object__find_map_by_name(const struct bpf_object *obj, const char *name)
    private static final class bpf_object__find_map_by_name {
        static final MethodHandle HANDLE = bind("bpf_object__find_map_by_name",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    }

    public static MethodHandle bpf_object__find_map_by_name$handle() {
        return bpf_object__find_map_by_name.HANDLE;
    }

    // int bpf_map__fd(const struct bpf_map *map)
    private static final class bpf_map__fd {
        static final MethodHandle HANDLE = bind("bpf_map__fd",
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    public static MethodHandle bpf_map__fd$handle() {
        return bpf_map__fd.HANDLE;
    }

    // int bpf_map__set_max_entries(struct bpf_map *map, __u32 max_entries); returns -errno
    private static final class bpf_map__set_max_entries {
        static final MethodHandle HANDLE = bind("bpf_map__set_max_entries",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    }

    public static MethodHandle bpf_map__set_max_entries$handle() {
        return bpf_map__set_max_entries.HANDLE;
    }

    // const void *bpf_map__initial_value(struct bpf_map *map, size_t *psize)
    private static final class bpf_map__initial_value {
        static final MethodHandle HANDLE = bind("bpf_map__initial_value",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    }

    public static MethodHandle bpf_map__initial_value$handle() {
        return bpf_map__initial_value.HANDLE;
    }

    // int bpf_program__set_autoload(struct bpf_program *prog, bool autoload)
    private static final class bpf_program__set_autoload {
        static final MethodHandle HANDLE = bind("bpf_program__set_autoload",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BOOLEAN));
    }

    public static MethodHandle bpf_program__set_autoload$handle() {
        return bpf_program__set_autoload.HANDLE;
    }

    // struct bpf_link *bpf_program__attach_uprobe_opts(const struct bpf_program *prog, pid_t pid,
    //         const char *binary_path, size_t func_offset, const struct bpf_uprobe_opts *opts)
    // Returns NULL and sets errno on error.
    private static final class bpf_program__attach_uprobe_opts {
        static final MethodHandle HANDLE = bind("bpf_program__attach_uprobe_opts",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS), Errno.CAPTURE);
    }

    public static MethodHandle bpf_program__attach_uprobe_opts$handle() {
        return bpf_program__attach_uprobe_opts.HANDLE;
    }

    // struct bpf_link *bpf_program__attach(const struct bpf_program *prog)
    // Attaches by the program's section (tp_btf/..., raw_tp/...); returns NULL and sets errno on error.
    private static final class bpf_program__attach {
        static final MethodHandle HANDLE = bind("bpf_program__attach",
                FunctionDescriptor.of(ADDRESS, ADDRESS), Errno.CAPTURE);
    }

    public static MethodHandle bpf_program__attach$handle() {
        return bpf_program__attach.HANDLE;
    }

    // struct bpf_link *bpf_program__attach_perf_event(const struct bpf_program *prog, int pfd)
    // The link owns pfd from then on: bpf_link__destroy disables and closes it. Returns NULL and sets errno.
    private static final class bpf_program__attach_perf_event {
        static final MethodHandle HANDLE = bind("bpf_program__attach_perf_event",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), Errno.CAPTURE);
    }

    public static MethodHandle bpf_program__attach_perf_event$handle() {
        return bpf_program__attach_perf_event.HANDLE;
    }

    // int bpf_program__fd(const struct bpf_program *prog): the loaded program's fd, or -errno
    private static final class bpf_program__fd {
        static final MethodHandle HANDLE = bind("bpf_program__fd",
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    public static MethodHandle bpf_program__fd$handle() {
        return bpf_program__fd.HANDLE;
    }

    // int bpf_program__set_expected_attach_type(struct bpf_program *prog, enum bpf_attach_type type): before
    // load only; 0, or -errno
    private static final class bpf_program__set_expected_attach_type {
        static final MethodHandle HANDLE = bind("bpf_program__set_expected_attach_type",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    }

    public static MethodHandle bpf_program__set_expected_attach_type$handle() {
        return bpf_program__set_expected_attach_type.HANDLE;
    }

    // enum bpf_prog_type bpf_program__type(const struct bpf_program *prog)
    private static final class bpf_program__type {
        static final MethodHandle HANDLE = bind("bpf_program__type", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    public static MethodHandle bpf_program__type$handle() {
        return bpf_program__type.HANDLE;
    }

    /** enum bpf_prog_type: uprobes and uretprobes are kprobe programs. */
    public static final int BPF_PROG_TYPE_KPROBE = 2;

    // struct bpf_program *bpf_object__next_program(const struct bpf_object *obj, struct bpf_program *prog):
    // the program after prog (NULL: the first), NULL after the last
    private static final class bpf_object__next_program {
        static final MethodHandle HANDLE = bind("bpf_object__next_program",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    }

    public static MethodHandle bpf_object__next_program$handle() {
        return bpf_object__next_program.HANDLE;
    }

    // int bpf_enable_stats(enum bpf_stats_type type): an fd that keeps run-time stats on while open (Linux 5.8+);
    // -errno on error. BPF_STATS_RUN_TIME = 0.
    private static final class bpf_enable_stats {
        static final MethodHandle HANDLE = bind("bpf_enable_stats",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    public static MethodHandle bpf_enable_stats$handle() {
        return bpf_enable_stats.HANDLE;
    }
    public static final int BPF_STATS_RUN_TIME = 0;

    // int bpf_obj_get_info_by_fd(int bpf_fd, void *info, __u32 *info_len); -errno on error
    private static final class bpf_obj_get_info_by_fd {
        static final MethodHandle HANDLE = bind("bpf_obj_get_info_by_fd",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    }

    public static MethodHandle bpf_obj_get_info_by_fd$handle() {
        return bpf_obj_get_info_by_fd.HANDLE;
    }

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
    private static final class bpf_link__destroy {
        static final MethodHandle HANDLE = bind("bpf_link__destroy",
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    public static MethodHandle bpf_link__destroy$handle() {
        return bpf_link__destroy.HANDLE;
    }

    // libbpf_print_fn_t libbpf_set_print(libbpf_print_fn_t fn): NULL silences libbpf's own stderr output.
    private static final class libbpf_set_print {
        static final MethodHandle HANDLE = bind("libbpf_set_print",
                FunctionDescriptor.of(ADDRESS, ADDRESS));
    }

    public static MethodHandle libbpf_set_print$handle() {
        return libbpf_set_print.HANDLE;
    }

    // int libbpf_strerror(int err, char *buf, size_t size)
    private static final class libbpf_strerror {
        static final MethodHandle HANDLE = bind("libbpf_strerror",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
    }

    public static MethodHandle libbpf_strerror$handle() {
        return libbpf_strerror.HANDLE;
    }

    // int libbpf_num_possible_cpus(void)
    private static final class libbpf_num_possible_cpus {
        static final MethodHandle HANDLE = bind("libbpf_num_possible_cpus",
                FunctionDescriptor.of(JAVA_INT));
    }

    public static MethodHandle libbpf_num_possible_cpus$handle() {
        return libbpf_num_possible_cpus.HANDLE;
    }

    // int bpf_map_lookup_elem(int fd, const void *key, void *value); returns -errno (libbpf 1.0 mode)
    private static final class bpf_map_lookup_elem {
        static final MethodHandle HANDLE = bind("bpf_map_lookup_elem",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    }

    public static MethodHandle bpf_map_lookup_elem$handle() {
        return bpf_map_lookup_elem.HANDLE;
    }

    // int bpf_map_get_next_key(int fd, const void *key, void *next_key); returns -errno (-ENOENT: no more keys;
    // bpf(2), BPF_MAP_GET_NEXT_KEY: a NULL key gives the first)
    private static final class bpf_map_get_next_key {
        static final MethodHandle HANDLE = bind("bpf_map_get_next_key",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    }

    public static MethodHandle bpf_map_get_next_key$handle() {
        return bpf_map_get_next_key.HANDLE;
    }

    // int bpf_map_update_elem(int fd, const void *key, const void *value, __u64 flags); returns -errno
    private static final class bpf_map_update_elem {
        static final MethodHandle HANDLE = bind("bpf_map_update_elem",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
    }

    public static MethodHandle bpf_map_update_elem$handle() {
        return bpf_map_update_elem.HANDLE;
    }

    // int bpf_map_delete_elem(int fd, const void *key); returns -errno
    private static final class bpf_map_delete_elem {
        static final MethodHandle HANDLE = bind("bpf_map_delete_elem",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    }

    public static MethodHandle bpf_map_delete_elem$handle() {
        return bpf_map_delete_elem.HANDLE;
    }

    // struct btf *btf__parse(const char *path, struct btf_ext **btf_ext); NULL and errno on error
    private static final class btf__parse {
        static final MethodHandle HANDLE = bind("btf__parse",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS), Errno.CAPTURE);
    }

    public static MethodHandle btf__parse$handle() {
        return btf__parse.HANDLE;
    }

    // void btf__free(struct btf *btf)
    private static final class btf__free {
        static final MethodHandle HANDLE = bind("btf__free", FunctionDescriptor.ofVoid(ADDRESS));
    }

    public static MethodHandle btf__free$handle() {
        return btf__free.HANDLE;
    }

    static {
        // libbpf prints its own diagnostics to stderr by default; infertop reports one line instead.
        if (System.getenv("INFERTOP_LIBBPF_DEBUG") == null) {
            try {
                MemorySegment ignored = (MemorySegment) libbpf_set_print.HANDLE.invokeExact(MemorySegment.NULL);
            } catch (Throwable t) {
                throw new ExceptionInInitializerError(t);
            }
        }
    }

    /** libbpf's message for a (positive or negative) error code. */
    public static String strerror(int err) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(256);
            int ignored = (int) libbpf_strerror.HANDLE.invokeExact(Math.abs(err), buf, 256L);
            return buf.getString(0);
        } catch (Throwable t) {
            return "error " + err;
        }
    }

}
