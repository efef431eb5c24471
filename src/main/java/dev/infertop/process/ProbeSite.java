package dev.infertop.process;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * Where to put the uprobe for one function, and why.
 *
 * @param function         the function symbol probed
 * @param vaddr            the probed link-time virtual address: the entry, or entry + 4 past an endbr64
 * @param fileOffset       the file offset of {@code vaddr}, to pass as libbpf's uprobe {@code func_offset}
 * @param instructionBytes the probed instruction's bytes where it was decoded (push, endbr64, jmp, call);
 *                         otherwise the first bytes at {@code vaddr}, whose instruction length is not decoded
 * @param costClass        whether the kernel emulates the probed instruction or single-steps it
 * @param reason           one human-readable line saying why this address was chosen
 */
public record ProbeSite(ElfSymbol function, long vaddr, long fileOffset, byte[] instructionBytes,
                        CostClass costClass, String reason) {
    public ProbeSite {
        instructionBytes = instructionBytes.clone();
    }

    @Override
    public byte[] instructionBytes() {
        return instructionBytes.clone();
    }

    /** Bytes between the function entry and the probe: 0, or 4 when the probe skips an endbr64. */
    public long offsetFromEntry() {
        return vaddr - function.vaddr();
    }

    public String instructionHex() {
        return HexFormat.ofDelimiter(" ").formatHex(instructionBytes);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ProbeSite that && function.equals(that.function) && vaddr == that.vaddr
                && fileOffset == that.fileOffset && Arrays.equals(instructionBytes, that.instructionBytes)
                && costClass == that.costClass && reason.equals(that.reason);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(vaddr) * 31 + function.hashCode();
    }

    @Override
    public String toString() {
        return function.name() + "+" + offsetFromEntry() + " (file offset 0x" + Long.toHexString(fileOffset) + ", "
                + instructionHex() + ", " + costClass + "): " + reason;
    }
}
