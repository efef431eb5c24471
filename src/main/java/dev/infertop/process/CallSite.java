package dev.infertop.process;

/**
 * A direct call instruction inside {@code caller} that reaches {@code calleeName}: the place for a uprobe that
 * fires when the caller arrives at the call, before the callee's first instruction runs.
 *
 * @param caller                 the function containing the call
 * @param calleeName             the function called (the symbol of the PLT stub, or the function at the target)
 * @param vaddr                  the link-time address of the call instruction
 * @param fileOffset             the file offset of {@code vaddr}, to pass as libbpf's uprobe {@code func_offset}
 * @param instructionLengthBytes 5 for x86 {@code call rel32}, 4 for aarch64 {@code bl}
 * @param returnVaddr            the address after the call, where the callee returns to
 * @param targetVaddr            the call's target: the PLT stub, or the callee's entry
 * @param viaPlt                 whether the target is a PLT stub
 * @param costClass              what a uprobe hit on the call costs
 * @param reason                 one human-readable line naming the instruction and its cost
 */
public record CallSite(ElfSymbol caller, String calleeName, long vaddr, long fileOffset, int instructionLengthBytes,
                       long returnVaddr, long targetVaddr, boolean viaPlt, CostClass costClass, String reason) {

    /** Bytes from the caller's entry to the call instruction. */
    public long offsetInCaller() {
        return vaddr - caller.vaddr();
    }

    @Override
    public String toString() {
        return caller.name() + "+0x" + Long.toHexString(offsetInCaller()) + " (0x" + Long.toHexString(vaddr)
                + ", file offset 0x" + Long.toHexString(fileOffset) + ") → " + calleeName + (viaPlt ? "@plt" : "")
                + ", " + costClass + ": " + reason;
    }
}
