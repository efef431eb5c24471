package dev.infertop.it;

import dev.infertop.ffi.LibC;
import dev.infertop.ffi.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The uprobe-multi links in the kernel, read through bpf(2) (bpftool 7.1, Debian 12's, lists them as "type 12"
 * with neither file nor offsets): each link's id, program, file, offsets, whether they are return probes, and
 * which processes hold a descriptor of it (/proc/PID/fdinfo's {@code link_id}). Where infertop attaches its
 * uprobes as such links, {@code bpftool perf show} lists none of them.
 */
final class UprobeMultiLinks {
    private UprobeMultiLinks() {}

    /** One link; {@code holders} are the processes with a descriptor of it. */
    record Link(int id, int programId, boolean retprobe, String path, List<Long> fileOffsets, List<Long> holders) {
        /** Its probes as {@code bpftool perf show} would name them: "uprobe|uretprobe FILENAME+0xOFFSET". */
        List<String> probes() {
            String kind = retprobe ? "uretprobe" : "uprobe";
            String file = Path.of(path).getFileName().toString();
            return fileOffsets.stream().map(offset -> kind + " " + file + "+0x" + Long.toHexString(offset)).toList();
        }
    }

    private static final Linker LINKER = Linker.nativeLinker();
    // syscall(2): long syscall(long number, ...); here bpf(int cmd, union bpf_attr *attr, unsigned int size)
    private static final MethodHandle SYSCALL = LINKER.downcallHandle(LINKER.defaultLookup().find("syscall").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT),
            Linker.Option.firstVariadicArg(1), Errno.CAPTURE);
    private static final int BPF_OBJ_GET_INFO_BY_FD = 15;
    private static final int BPF_LINK_GET_FD_BY_ID = 30;
    private static final int BPF_LINK_GET_NEXT_ID = 31;
    /** enum bpf_link_type (Linux 6.6). */
    private static final int BPF_LINK_TYPE_UPROBE_MULTI = 12;
    private static final int BPF_F_UPROBE_MULTI_RETURN = 1;
    private static final int MAX_OFFSETS = 1 << 16;
    private static final int PATH_MAX = 4096;

    /** Every uprobe-multi link in the kernel now. */
    static List<Link> all() {
        Map<Long, List<Long>> holders = LeakCheck.fdinfoHolders("link_id:");
        List<Link> links = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(128, 8);
            MemorySegment errno = Errno.allocate(arena);
            int id = 0;
            while (true) {
                attr.fill((byte) 0);
                attr.set(JAVA_INT, 0, id); // start_id
                if (bpf(BPF_LINK_GET_NEXT_ID, attr, errno) < 0) {
                    break; // ENOENT: no more
                }
                id = attr.get(JAVA_INT, 4); // next_id
                Link link = read(arena, id, holders.getOrDefault((long) id, List.of()));
                if (link != null) {
                    links.add(link);
                }
            }
        }
        return links;
    }

    /** The links that process {@code pid} holds. */
    static List<Link> heldBy(long pid) {
        return all().stream().filter(link -> link.holders().contains(pid)).toList();
    }

    private static Link read(Arena arena, int id, List<Long> holders) {
        MemorySegment attr = arena.allocate(128, 8);
        MemorySegment errno = Errno.allocate(arena);
        attr.set(JAVA_INT, 0, id); // link_id
        long fd = bpf(BPF_LINK_GET_FD_BY_ID, attr, errno);
        if (fd < 0) {
            return null; // released meanwhile
        }
        try {
            MemorySegment info = arena.allocate(256, 8);
            MemorySegment get = arena.allocate(128, 8);
            get.set(JAVA_INT, 0, (int) fd); // bpf_fd
            get.set(JAVA_LONG, 8, info.address());
            // The type first, from the head alone: another type reads the union's pointers as its own buffers.
            get.set(JAVA_INT, 4, 16); // info_len
            if (bpf(BPF_OBJ_GET_INFO_BY_FD, get, errno) < 0) {
                throw new IllegalStateException("cannot read link " + id + ": errno " + Errno.read(errno));
            }
            if (info.get(JAVA_INT, 0) != BPF_LINK_TYPE_UPROBE_MULTI) {
                return null;
            }
            MemorySegment path = arena.allocate(PATH_MAX);
            MemorySegment offsets = arena.allocate(JAVA_LONG, MAX_OFFSETS);
            // struct bpf_link_info: type, id, prog_id, then the union at 16: uprobe_multi's path, offsets,
            // ref_ctr_offsets, cookies (u64 each), path_size, count, flags, pid (u32 each)
            info.fill((byte) 0);
            info.set(JAVA_LONG, 16, path.address());
            info.set(JAVA_LONG, 24, offsets.address());
            info.set(JAVA_INT, 48, PATH_MAX);
            info.set(JAVA_INT, 52, MAX_OFFSETS);
            get.set(JAVA_INT, 4, (int) info.byteSize());
            if (bpf(BPF_OBJ_GET_INFO_BY_FD, get, errno) < 0) {
                throw new IllegalStateException("cannot read uprobe-multi link " + id + ": errno " + Errno.read(errno));
            }
            int count = info.get(JAVA_INT, 52);
            List<Long> at = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                at.add(offsets.getAtIndex(JAVA_LONG, i));
            }
            return new Link(id, info.get(JAVA_INT, 8), (info.get(JAVA_INT, 56) & BPF_F_UPROBE_MULTI_RETURN) != 0,
                    path.getString(0), at, holders);
        } finally {
            LibC.closeQuietly((int) fd);
        }
    }

    private static long bpf(int command, MemorySegment attr, MemorySegment errno) {
        try {
            return (long) SYSCALL.invokeExact(errno, syscallNumber(), command, attr, (int) attr.byteSize());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static long syscallNumber() {
        return switch (System.getProperty("os.arch")) {
            case "aarch64", "arm64" -> 280;
            default -> 321;
        };
    }
}
