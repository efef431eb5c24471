package dev.infertop.process;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where each function of a library starts and how long it is, from its unwind tables: {@code .eh_frame_hdr}'s
 * sorted search table points at one FDE per function (and per cold part), whose pc_begin and pc_range give the
 * range. Unwind tables survive {@code strip --strip-all} (C++ exceptions and backtraces need them), so a stripped
 * library, whose .symtab with the local functions is gone, still says where every function is; only the names
 * are lost ({@link StrippedFunctions} recovers the few infertop needs from the calls between them).
 *
 * <p>Only the encodings every x86-64 and aarch64 toolchain emits are read: the table as datarel sdata4 pairs,
 * FDE pc_begin as a 4-byte field that must agree with the table's entry; anything else gives no index. Every
 * number comes from the file and is checked against it (hostile input): an FDE whose pc_begin disagrees with
 * the table, a range past its segment, or more entries than {@link #MAX_FUNCTIONS} end the index there.
 */
public final class EhFrameIndex {
    /** Functions indexed at most (a large libggml-cpu has a few thousand). */
    static final int MAX_FUNCTIONS = 500_000;
    private static final int DW_EH_PE_UDATA4 = 0x03;
    private static final int DW_EH_PE_DATAREL_SDATA4 = 0x3b;

    /** One function's code range. */
    public record Range(long vaddr, long sizeBytes) {
        public boolean contains(long address) {
            return address >= vaddr && address < vaddr + sizeBytes;
        }
    }

    private final List<Range> ranges;

    private EhFrameIndex(List<Range> ranges) {
        this.ranges = List.copyOf(ranges);
    }

    /** The ranges in address order (empty: no .eh_frame_hdr, or one in an encoding not read here). */
    public List<Range> ranges() {
        return ranges;
    }

    /** The function that starts exactly at {@code vaddr}. */
    public Optional<Range> startingAt(long vaddr) {
        int low = 0;
        int high = ranges.size() - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            long start = ranges.get(mid).vaddr();
            if (start == vaddr) {
                return Optional.of(ranges.get(mid));
            }
            if (start < vaddr) {
                low = mid + 1;
            } else {
                high = mid - 1;
            }
        }
        return Optional.empty();
    }

    public static EhFrameIndex of(ElfFile elf) throws TargetException {
        Optional<ElfSection> section = elf.section(".eh_frame_hdr");
        if (section.isEmpty() || section.get().sizeBytes() < 12 || !section.get().isAllocated()) {
            return new EhFrameIndex(List.of());
        }
        long hdr = section.get().vaddr();
        byte[] head = elf.readBytesAtVaddr(hdr, 12);
        if (head.length < 12 || head[0] != 1 || (head[2] & 0xff) != DW_EH_PE_UDATA4
                || (head[3] & 0xff) != DW_EH_PE_DATAREL_SDATA4 || (head[1] & 0x0f) != 0x0b) {
            return new EhFrameIndex(List.of()); // version 1, eh_frame_ptr 4 bytes, count udata4, table datarel sdata4
        }
        long count = Integer.toUnsignedLong(PltResolver.word(head, 8));
        long tableBytes = count * 8;
        if (count == 0 || count > MAX_FUNCTIONS || 12 + tableBytes > section.get().sizeBytes()
                || tableBytes > ElfFile.MAX_READ_BYTES) {
            return new EhFrameIndex(List.of());
        }
        byte[] table = elf.readBytesAtVaddr(hdr + 12, (int) tableBytes);
        List<Range> ranges = new ArrayList<>((int) count);
        long previous = Long.MIN_VALUE;
        for (int i = 0; i + 8 <= table.length; i += 8) {
            if ((i & 0x7fff) == 0) {
                ScanTimeLimit.checkInterrupted(elf.path());
            }
            long start = hdr + PltResolver.word(table, i);
            long fde = hdr + PltResolver.word(table, i + 4);
            byte[] entry;
            try {
                entry = elf.readBytesAtVaddr(fde, 16);
            } catch (TargetException e) {
                break; // an FDE pointer outside the file's segments: the table is not to be trusted past here
            }
            if (entry.length < 16 || PltResolver.word(entry, 0) == -1 || start < previous) {
                break; // the 64-bit FDE form, or a table out of order: not what a toolchain writes
            }
            long pcBegin = fde + 8 + PltResolver.word(entry, 8);
            long pcRange = Integer.toUnsignedLong(PltResolver.word(entry, 12));
            if (pcBegin != start || pcRange == 0 || pcRange > CallSiteScanner.MAX_FUNCTION_BYTES) {
                continue; // an FDE in another encoding, or an empty one: this function is not indexed
            }
            ranges.add(new Range(start, pcRange));
            previous = start;
        }
        return new EhFrameIndex(ranges);
    }
}
