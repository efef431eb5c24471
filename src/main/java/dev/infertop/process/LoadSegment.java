package dev.infertop.process;

/**
 * A PT_LOAD program header: {@code fileSizeBytes} bytes at {@code fileOffset} are mapped at {@code vaddr};
 * the rest up to {@code memorySizeBytes} is zero-filled (.bss) and has no file offset.
 */
public record LoadSegment(long vaddr, long fileOffset, long fileSizeBytes, long memorySizeBytes, int flags) {
    private static final int PF_X = 1;

    public boolean isExecutable() {
        return (flags & PF_X) != 0;
    }

    /** Whether the byte at {@code address} comes from the file (and so can be probed or read there). */
    public boolean containsFileBacked(long address) {
        return address >= vaddr && address - vaddr < fileSizeBytes;
    }

    public long fileOffsetOf(long address) {
        return address - vaddr + fileOffset;
    }
}
