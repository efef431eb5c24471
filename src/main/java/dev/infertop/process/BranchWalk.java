package dev.infertop.process;

/**
 * Follows one function's code straight on from an address, through unconditional direct jumps, to the first
 * place where the way on is no longer one: a return, a direct call, a conditional branch, or anything the walk
 * does not follow (an indirect jump or call, a trap, a jump out of the function, too many instructions).
 *
 * <p>Enough control flow to tell the graph node loop's barrier calls from the ones of op code inlined into it
 * ({@link NodeLoopBarriers}); not a disassembler. x86_64 instructions are measured with {@link X86Decoder}
 * (jump targets are instruction starts); aarch64 ones are fixed 4-byte words.
 */
final class BranchWalk {
    /** Where a straight walk stopped. */
    sealed interface End {}

    record Return() implements End {}

    /** A direct call instruction at {@code vaddr}. */
    record Call(long vaddr) implements End {}

    /** A conditional branch: on to {@code fallThroughVaddr} or to {@code takenVaddr}. */
    record Branch(long fallThroughVaddr, long takenVaddr) implements End {}

    /** Anything else: the walk does not know where the code goes. */
    record Unknown() implements End {}

    /** The walk came to {@code vaddr}, one of the addresses it was asked to stop at. */
    record Reached(long vaddr) implements End {}

    /** Where a walk stopped, and whether it jumped backwards on the way (a loop's back edge). */
    record Walk(End end, boolean jumpedBack) {}

    /** Instructions a walk follows at most: the tails it looks at are an epilogue or a loop's condition. */
    static final int MAX_INSTRUCTIONS = 32;

    private final ElfFile elf;
    private final ElfSymbol function;
    private final byte[] code;

    BranchWalk(ElfFile elf, ElfSymbol function) throws TargetException {
        this.elf = elf;
        this.function = function;
        this.code = CallSiteScanner.codeOf(elf, function);
    }

    /** Walks from {@code vaddr} (an instruction start inside the function). */
    End from(long vaddr) {
        return walk(vaddr, java.util.Set.of()).end();
    }

    /**
     * Walks from {@code vaddr} as {@link #from}, stopping also where it comes to one of {@code stops}
     * ({@link Reached}; {@code vaddr} itself included).
     */
    Walk walk(long vaddr, java.util.Set<Long> stops) {
        long pc = vaddr;
        boolean jumpedBack = false;
        for (int step = 0; step < MAX_INSTRUCTIONS; step++) {
            long at = pc - function.vaddr();
            if (at < 0 || at >= code.length) {
                return new Walk(new Unknown(), jumpedBack);
            }
            if (stops.contains(pc)) {
                return new Walk(new Reached(pc), jumpedBack);
            }
            Step next;
            try {
                next = switch (elf.machine()) {
                    case X86_64 -> x86(pc, (int) at);
                    case AARCH64 -> aarch64(pc, (int) at);
                };
            } catch (TargetException e) {
                // bytes the decoder cannot measure: no way on that the walk can trust
                return new Walk(new Unknown(), jumpedBack);
            }
            if (next.end() != null) {
                return new Walk(next.end(), jumpedBack);
            }
            jumpedBack |= next.nextVaddr() <= pc;
            pc = next.nextVaddr();
        }
        return new Walk(new Unknown(), jumpedBack);
    }

    /** Either where the walk goes on, or where it ends. */
    private record Step(long nextVaddr, End end) {
        static Step on(long vaddr) {
            return new Step(vaddr, null);
        }

        static Step end(End end) {
            return new Step(0, end);
        }
    }

    private Step x86(long pc, int at) throws TargetException {
        X86Decoder.Instruction i = X86Decoder.decode(code, at, code.length);
        long next = pc + i.length();
        if (i.encoding() != X86Decoder.Encoding.LEGACY) {
            return Step.on(next);
        }
        int op = i.opcode();
        if (i.map() == 0) {
            if (op == 0xc3 || op == 0xc2) {
                return Step.end(new Return());
            }
            if (op == 0xe8) {
                return Step.end(new Call(pc));
            }
            if (op == 0xe9) {
                return Step.on(next + PltResolver.word(code, at + i.length() - 4));
            }
            if (op == 0xeb) {
                return Step.on(next + code[at + i.length() - 1]);
            }
            if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) {
                return Step.end(new Branch(next, next + code[at + i.length() - 1]));
            }
            // ff: indirect call or jump among others; cc int3, f4 hlt, cf iret, ca/cb far returns
            if (op == 0xff || op == 0xcc || op == 0xf4 || op == 0xcf || op == 0xca || op == 0xcb) {
                return Step.end(new Unknown());
            }
        } else if (i.map() == 1) {
            if (op >= 0x80 && op <= 0x8f) {
                return Step.end(new Branch(next, next + PltResolver.word(code, at + i.length() - 4)));
            }
            if (op == 0x0b) { // ud2
                return Step.end(new Unknown());
            }
        }
        return Step.on(next);
    }

    private Step aarch64(long pc, int at) {
        int w = PltResolver.word(code, at);
        Aarch64Instruction c = Aarch64Instruction.of(w);
        return switch (c) {
            case RET, RET_AUTHENTICATED -> Step.end(new Return());
            case BL -> Step.end(new Call(pc));
            case B -> Step.on(c.target(pc, w));
            case B_COND, CBZ_CBNZ, TBZ_TBNZ -> Step.end(new Branch(pc + 4, c.target(pc, w)));
            case BR, BLR, BRANCH_REGISTER, EXCEPTION, UDF -> Step.end(new Unknown());
            default -> Step.on(pc + 4);
        };
    }
}
