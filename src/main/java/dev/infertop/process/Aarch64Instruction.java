package dev.infertop.process;

/**
 * The aarch64 instruction classes infertop reads code for: the branches and PC-relative forms (which the arm64
 * uprobe code simulates rather than steps, and which a control-flow walk follows) and a few prologue
 * instructions it names. Instructions are fixed 4-byte words; each class is a mask and a value (Arm ARM, C4.1).
 */
public enum Aarch64Instruction {
    B(0xfc000000, 0x14000000, "b", true),
    BL(0xfc000000, 0x94000000, "bl", true),
    B_COND(0xff000010, 0x54000000, "b.cond", true),
    CBZ_CBNZ(0x7e000000, 0x34000000, "cbz/cbnz", true),
    TBZ_TBNZ(0x7e000000, 0x36000000, "tbz/tbnz", true),
    RET(0xfffffc1f, 0xd65f0000, "ret", true),
    /** retaa / retab (pointer authentication): returns too, but not among the instructions the kernel simulates. */
    RET_AUTHENTICATED(0xfffffbff, 0xd65f0bff, "retaa/retab", false),
    BR(0xfffffc1f, 0xd61f0000, "br", true),
    BLR(0xfffffc1f, 0xd63f0000, "blr", true),
    /** Any other unconditional branch to a register (braa, blraa, eret, ...): where it goes is not in the code. */
    BRANCH_REGISTER(0xfe000000, 0xd6000000, "branch to a register", false),
    ADR(0x9f000000, 0x10000000, "adr", true),
    ADRP(0x9f000000, 0x90000000, "adrp", true),
    /** brk, hlt, svc and the other exception-generating instructions. */
    EXCEPTION(0xff000000, 0xd4000000, "exception", false),
    PACIASP(0xffffffff, 0xd503233f, "paciasp", false),
    BTI_C(0xffffffff, 0xd503245f, "bti c", false),
    NOP(0xffffffff, 0xd503201f, "nop", false),
    /** stp x29, x30, [sp, #imm]! : the usual first instruction of a frame. */
    STP_FP_LR_PRE(0xffc07fff, 0xa9807bfd, "stp x29, x30, [sp, #imm]!", false),
    /** sub sp, sp, #imm (64-bit, optionally shifted by 12). */
    SUB_SP_IMM(0xff8003ff, 0xd10003ff, "sub sp, sp, #imm", false),
    UDF(0xffff0000, 0x00000000, "udf", false),
    OTHER(0, 0, "instruction", false);

    /** values() copies its array on every call; {@link #of} runs once per word of a scanned function. */
    private static final Aarch64Instruction[] CLASSES = values();

    private final int mask;
    private final int value;
    private final String name;
    private final boolean simulatedByUprobes;

    Aarch64Instruction(int mask, int value, String name, boolean simulatedByUprobes) {
        this.mask = mask;
        this.value = value;
        this.name = name;
        this.simulatedByUprobes = simulatedByUprobes;
    }

    /** The class of {@code word}: the first that matches, in declaration order (specific before general). */
    public static Aarch64Instruction of(int word) {
        for (Aarch64Instruction c : CLASSES) {
            if ((word & c.mask) == c.value) {
                return c;
            }
        }
        return OTHER;
    }

    /** Whether the arm64 uprobe code simulates this class instead of stepping it out of line. */
    public boolean simulatedByUprobes() {
        return simulatedByUprobes;
    }

    /** The branch target of a B, BL, B.cond, CBZ/CBNZ or TBZ/TBNZ at {@code pc}; unsupported for other classes. */
    public long target(long pc, int word) {
        return switch (this) {
            case B, BL -> pc + 4L * PltResolver.signExtend(word & 0x3ffffff, 26);
            case B_COND, CBZ_CBNZ -> pc + 4L * PltResolver.signExtend((word >>> 5) & 0x7ffff, 19);
            case TBZ_TBNZ -> pc + 4L * PltResolver.signExtend((word >>> 5) & 0x3fff, 14);
            default -> throw new UnsupportedOperationException(name + " has no immediate target");
        };
    }

    /** A readable name for {@code word} of this class, with its immediate where the name has one. */
    public String describe(int word) {
        return switch (this) {
            case STP_FP_LR_PRE -> "stp x29, x30, [sp, #" + 8 * PltResolver.signExtend((word >>> 15) & 0x7f, 7) + "]!";
            case SUB_SP_IMM -> "sub sp, sp, #" + (((word >>> 10) & 0xfff) << (((word >>> 22) & 1) == 1 ? 12 : 0));
            case OTHER -> String.format("instruction %08x", word);
            default -> name;
        };
    }
}
