package dev.infertop.process;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * ggml's node loop where it has no function of its own and ggml_barrier no call: an object built with ggml's
 * OpenMP code path but compiled without OpenMP (@fugood/llama.node's LTO-built addon). The {@code #pragma omp}
 * lines are then dropped: ggml_graph_compute runs the loop itself, on its one thread, inlined, and what is left of
 * ggml_barrier is its relaxed read of the threadpool's thread count, {@code mov DISP(%rdi),%eax; ret}, which the
 * object still exports (ICF may fold it with another accessor). Each inlined barrier is that same read of the
 * same field, so the loop's places are found by that displacement and the loop's shape:
 * <ul>
 * <li>the <b>in-loop</b> barrier ({@code if (node_n + 1 < n_nodes) ggml_barrier(...)}) runs straight on, through
 *     the loop's back edge, to the loop's condition, one side of which runs straight on to
 * <li>the <b>after-loop</b> barrier, the last read before the thread function returns;
 * <li>the <b>thread's start</b> on the graph is the read of the same field for the compute params
 *     ({@code .nth}) before the first node: straight on, with no back edge, to the condition that skips an empty
 *     graph, whose one side runs straight on to the after-loop barrier.
 * </ul>
 * Exactly one of each, or nothing is reported: never a guess. Reads of the field inside op code inlined into the
 * loop lead elsewhere (to the op's own code or to the node loop's checks after an op). x86_64 only: an aarch64
 * build of this shape has not been seen.
 */
public final class InlinedNodeLoop {
    /** The function the loop is inlined into (exported in every build). */
    static final String CALLER = "ggml_graph_compute";
    /** The longest ggml_barrier that can be a lone load and a return (a load of up to 7 bytes, a 1-2 byte ret). */
    private static final int MAX_BARRIER_BYTES = 16;

    /**
     * The loop's places: the thread's start on a graph, its barrier after each node group and after the loop
     * (link-time addresses), inside {@code function}; {@code threadCountOffset} is the field the barrier reads.
     */
    public record Sites(ElfSymbol function, long threadStartVaddr, long inLoopVaddr, long afterLoopVaddr,
                        int threadCountOffset) {
        /** One line for the probe listing: how the places were found. */
        public String reason() {
            return "node loop inlined into " + function.name() + ", ggml_barrier a lone read of the thread count"
                    + " (+0x" + Integer.toHexString(threadCountOffset) + "): the loop's reads of it found by its shape;"
                    + " a load, single-stepped";
        }
    }

    private InlinedNodeLoop() {}

    /** The loop's places in {@code elf}; empty unless its code has exactly the shape above. */
    public static Optional<Sites> find(ElfFile elf) throws TargetException {
        if (elf.machine() != Machine.X86_64 || !elf.functionAndClones(StrippedFunctions.NODE_LOOP).isEmpty()) {
            return Optional.empty();
        }
        Optional<ElfSymbol> barrier = elf.function("ggml_barrier");
        Optional<ElfSymbol> caller = elf.function(CALLER);
        if (barrier.isEmpty() || caller.isEmpty() || barrier.get().sizeBytes() <= 0
                || barrier.get().sizeBytes() > MAX_BARRIER_BYTES || caller.get().sizeBytes() <= 0) {
            return Optional.empty();
        }
        OptionalDisplacement read = loneThreadCountRead(elf, barrier.get());
        if (read.absent()) {
            return Optional.empty();
        }
        byte[] code = CallSiteScanner.codeOf(elf, caller.get());
        List<X86Decoder.Instruction> instructions;
        try {
            instructions = X86Decoder.decodeAll(code, 0, code.length);
        } catch (TargetException e) {
            return Optional.empty(); // bytes between functions the linear walk cannot measure: no shape to trust
        }
        List<long[]> loads = new ArrayList<>(); // {vaddr, next vaddr}
        for (X86Decoder.Instruction i : instructions) {
            ScanTimeLimit.checkInterrupted(elf.path());
            if (loadDisplacement(code, i, false) == read.displacement()) {
                long vaddr = caller.get().vaddr() + i.offset();
                loads.add(new long[] {vaddr, vaddr + i.length()});
            }
        }
        Set<Long> loadAddresses = new HashSet<>();
        loads.forEach(load -> loadAddresses.add(load[0]));
        BranchWalk walk = new BranchWalk(elf, caller.get());
        List<long[]> inLoop = new ArrayList<>(); // {load, after-loop load}
        List<long[]> beforeLoop = new ArrayList<>();
        for (long[] load : loads) {
            Set<Long> others = new HashSet<>(loadAddresses);
            others.remove(load[0]);
            BranchWalk.Walk toCondition = walk.walk(load[1], others);
            if (!(toCondition.end() instanceof BranchWalk.Branch(long fallThrough, long taken))) {
                continue;
            }
            for (long side : new long[] {fallThrough, taken}) {
                if (walk.walk(side, others).end() instanceof BranchWalk.Reached(long after)) {
                    long other = side == fallThrough ? taken : fallThrough;
                    // The back edge: jumped back on the way to the condition, or the condition's other side goes back.
                    boolean loops = toCondition.jumpedBack() || other <= load[0];
                    (loops ? inLoop : beforeLoop).add(new long[] {load[0], after});
                }
            }
        }
        if (inLoop.size() != 1 || beforeLoop.size() != 1 || inLoop.getFirst()[1] != beforeLoop.getFirst()[1]
                || inLoop.getFirst()[1] == inLoop.getFirst()[0]) {
            return Optional.empty();
        }
        return Optional.of(new Sites(caller.get(), beforeLoop.getFirst()[0], inLoop.getFirst()[0],
                inLoop.getFirst()[1], read.displacement()));
    }

    private record OptionalDisplacement(int displacement) {
        boolean absent() {
            return displacement < 0;
        }
    }

    /** ggml_barrier's {@code DISP} where its whole body is {@code mov DISP(%rdi),%eax; ret}; -1 otherwise. */
    private static OptionalDisplacement loneThreadCountRead(ElfFile elf, ElfSymbol barrier) throws TargetException {
        byte[] code = CallSiteScanner.codeOf(elf, barrier);
        try {
            X86Decoder.Instruction load = X86Decoder.decode(code, 0, code.length);
            int displacement = loadDisplacement(code, load, true);
            if (displacement < 0 || load.length() >= code.length) {
                return new OptionalDisplacement(-1);
            }
            X86Decoder.Instruction ret = X86Decoder.decode(code, load.length(), code.length);
            boolean returns = ret.encoding() == X86Decoder.Encoding.LEGACY && ret.map() == 0 && ret.opcode() == 0xc3;
            return new OptionalDisplacement(returns ? displacement : -1);
        } catch (TargetException e) {
            return new OptionalDisplacement(-1);
        }
    }

    /**
     * The displacement of a 32-bit load {@code mov disp(%base),%r32} (8b /r, base register plus disp8 or disp32,
     * no index, not the stack or frame pointer: a field of a struct), -1 for any other instruction. With
     * {@code fromRdiToEax} only {@code mov disp(%rdi),%eax}.
     */
    static int loadDisplacement(byte[] code, X86Decoder.Instruction i, boolean fromRdiToEax) {
        if (i.encoding() != X86Decoder.Encoding.LEGACY || i.map() != 0 || i.opcode() != 0x8b
                || (i.rex() & 0x08) != 0 || i.legacyPrefixes().length != 0) {
            return -1;
        }
        int modrmAt = i.offset() + (i.rex() != 0 ? 1 : 0) + 1;
        int modrm = Byte.toUnsignedInt(code[modrmAt]);
        int mod = modrm >>> 6;
        int reg = (modrm >>> 3) & 7 | ((i.rex() & 0x04) != 0 ? 8 : 0);
        int rm = modrm & 7;
        int base = rm | ((i.rex() & 0x01) != 0 ? 8 : 0);
        if (mod == 0 || mod == 3 || rm == 4 || base == 5) {
            return -1; // no displacement, a register, a SIB (the stack pointer among them), or the frame pointer
        }
        if (fromRdiToEax && (reg != 0 || base != 7)) {
            return -1;
        }
        return mod == 1 ? Byte.toUnsignedInt(code[modrmAt + 1]) > 127 ? -1 : code[modrmAt + 1]
                : PltResolver.word(code, modrmAt + 1);
    }
}
