package dev.infertop.process;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * Chooses the cheapest safe uprobe address for a function entry.
 *
 * <p>On x86_64 the kernel emulates {@code push reg} (0x50–0x57, or REX.B 0x41 + 0x50–0x57) and relative
 * jmp/call in place, but single-steps everything else, endbr64 included, at several times the cost
 * ({@link CostClass}). Libraries built with {@code -fcf-protection} (every prebuilt llama.cpp) begin each function
 * with endbr64, usually followed by the prologue's first push, so probing entry + 4 makes the probe much
 * cheaper. That is safe because endbr64 is a 4-byte no-op outside indirect-branch tracking: every call that
 * executes the entry falls through to entry + 4 exactly once, with registers and stack untouched, and
 * nothing jumps to entry + 4 directly (it is the prologue, not a loop head).
 *
 * <p>The same address serves a uretprobe: the kernel hijacks the return address at {@code [rsp]} when the
 * probe hits, and after endbr64 — but before the push — {@code rsp} still points at it. Never probe past the
 * push: from then on {@code [rsp]} is the pushed register, not the return address.
 *
 * <p>On aarch64 the probe goes on the entry, never past it: a uretprobe replaces the return address in the link
 * register when the probe hits, and after a {@code paciasp} or the prologue's {@code stp x29, x30} the register
 * is signed or already saved. The arm64 uprobe code simulates branches and PC-relative address forms (b, bl,
 * b.cond, cbz, tbz, br, blr, ret, adr, adrp) and steps everything else out of line (an XOL slot and a
 * single-step exception), which is what the usual prologue instructions get; the reason names the instruction.
 */
public final class ProbePlacement {
    private static final byte[] ENDBR64 = {(byte) 0xf3, 0x0f, 0x1e, (byte) 0xfa};
    private static final String[] LOW_REGISTERS = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"};
    private static final int BYTES_EXAMINED = 8;

    private ProbePlacement() {}

    /** The decision relative to the entry, before addresses are known: pure, so testable on bare bytes. */
    public record Decision(int offsetFromEntry, int instructionLengthBytes, CostClass costClass, String reason) {
        /** Length 0 means the probed instruction was not decoded. */
        public boolean instructionDecoded() {
            return instructionLengthBytes > 0;
        }
    }

    /** Places the probe for {@code function} of {@code elf}, reading its first instructions from the file. */
    public static ProbeSite place(ElfFile elf, ElfSymbol function) throws TargetException {
        byte[] entry = elf.readBytesAtVaddr(function.vaddr(), 16);
        if (entry.length == 0) {
            throw new TargetException("function " + function.name() + " has no code in " + elf.path());
        }
        Decision decision = decide(elf.machine(), entry, function.sizeBytes());
        int from = decision.offsetFromEntry();
        int length = decision.instructionDecoded() ? decision.instructionLengthBytes() : BYTES_EXAMINED;
        byte[] instruction = Arrays.copyOfRange(entry, from, Math.min(entry.length, from + length));
        long vaddr = function.vaddr() + from;
        return new ProbeSite(function, vaddr, elf.fileOffsetOf(vaddr), instruction, decision.costClass(),
                decision.reason());
    }

    /**
     * Decides on the bytes at a function entry; {@code functionSizeBytes} (0 when unknown) keeps the probe
     * inside the function.
     */
    public static Decision decide(Machine machine, byte[] entry, long functionSizeBytes) {
        return switch (machine) {
            case X86_64 -> decideX86(entry, functionSizeBytes);
            case AARCH64 -> decideAarch64(entry);
        };
    }

    private static Decision decideAarch64(byte[] entry) {
        if (entry.length < 4) {
            return new Decision(0, 0, CostClass.SINGLE_STEPPED, "at entry: fewer than 4 bytes, assumed stepped");
        }
        int w = PltResolver.word(entry, 0);
        Aarch64Instruction c = Aarch64Instruction.of(w);
        return c.simulatedByUprobes()
                ? new Decision(0, 4, CostClass.EMULATED, "at entry, on " + c.describe(w)
                        + ": simulated by the arm64 uprobe code")
                : new Decision(0, 4, CostClass.SINGLE_STEPPED, "at entry, on " + c.describe(w)
                        + ": stepped out of line by the arm64 uprobe code");
    }

    private static Decision decideX86(byte[] entry, long functionSizeBytes) {
        if (startsWithEndbr64(entry)) {
            int pushLength = pushLengthAt(entry, ENDBR64.length);
            boolean insideFunction = functionSizeBytes == 0 || ENDBR64.length + pushLength <= functionSizeBytes;
            if (pushLength > 0 && insideFunction) {
                return new Decision(ENDBR64.length, pushLength, CostClass.EMULATED,
                        "after endbr64, on push " + pushName(entry, ENDBR64.length) + ": emulated");
            }
            return new Decision(0, ENDBR64.length, CostClass.SINGLE_STEPPED,
                    "on endbr64 at entry: single-stepped (next is " + hexAt(entry, ENDBR64.length)
                            + ", not a push)");
        }
        int pushLength = pushLengthAt(entry, 0);
        if (pushLength > 0) {
            return new Decision(0, pushLength, CostClass.EMULATED, "on push " + pushName(entry, 0) + " at entry: emulated");
        }
        int branchLength = relativeBranchLength(entry);
        if (branchLength > 0) {
            String branch = Byte.toUnsignedInt(entry[0]) == 0xe8 ? "call" : "jmp";
            return new Decision(0, branchLength, CostClass.EMULATED, "on " + branch + " at entry: emulated branch");
        }
        return new Decision(0, 0, CostClass.SINGLE_STEPPED,
                "at entry, on " + hexAt(entry, 0) + " (neither push nor endbr64+push): single-stepped");
    }

    private static boolean startsWithEndbr64(byte[] code) {
        return code.length >= ENDBR64.length && Arrays.equals(code, 0, ENDBR64.length, ENDBR64, 0, ENDBR64.length);
    }

    /** 1 for push r64 (0x50–0x57), 2 for REX.B push r8–r15 (0x41 0x50–0x57), 0 for anything else. */
    private static int pushLengthAt(byte[] code, int at) {
        if (at < code.length && isPushOpcode(code[at])) {
            return 1;
        }
        if (at + 1 < code.length && code[at] == 0x41 && isPushOpcode(code[at + 1])) {
            return 2;
        }
        return 0;
    }

    private static boolean isPushOpcode(byte b) {
        return b >= 0x50 && b <= 0x57;
    }

    private static String pushName(byte[] code, int at) {
        return code[at] == 0x41 ? "%r" + (8 + code[at + 1] - 0x50) : "%" + LOW_REGISTERS[code[at] - 0x50];
    }

    /** Unprefixed call rel32 (e8), jmp rel32 (e9), jmp rel8 (eb): the kernel emulates these branches. */
    private static int relativeBranchLength(byte[] code) {
        if (code.length == 0) {
            return 0;
        }
        return switch (Byte.toUnsignedInt(code[0])) {
            case 0xe8, 0xe9 -> code.length >= 5 ? 5 : 0;
            case 0xeb -> code.length >= 2 ? 2 : 0;
            default -> 0;
        };
    }

    private static String hexAt(byte[] code, int at) {
        int end = Math.min(code.length, at + 4);
        return at >= end ? "nothing" : HexFormat.ofDelimiter(" ").formatHex(code, at, end) + " …";
    }
}
