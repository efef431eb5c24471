package dev.infertop.process;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Finds the direct call instructions inside one function that call a given function, directly or through its
 * PLT stub, so that a uprobe can sit on the call itself.
 *
 * <p>Why the call and not the callee: a uprobe on x86 {@code call rel32} (or aarch64 {@code bl}) is emulated by
 * the kernel's uprobe code, whereas most first instructions of a callee ({@code mov}, endbr64) are
 * single-stepped, several times dearer ({@link CostClass}). And a call site belongs to one caller: probing the calls of
 * ggml_barrier inside the graph node loop ignores the barriers operators take internally.
 *
 * <p>x86_64 code is walked instruction by instruction from the function entry with {@link X86Decoder}, so a
 * byte e8 inside another instruction is never taken for a call; bytes the decoder cannot measure fail the whole
 * function with a {@link TargetException} instead of guessing. aarch64 instructions are fixed 4-byte words;
 * {@code bl imm26} is {@code 100101} in bits 31–26. Indirect calls ({@code call *%rax}, {@code blr}) and tail
 * calls ({@code jmp}, {@code b}) are not call sites here.
 */
public final class CallSiteScanner {
    /**
     * The largest function decoded: each instruction becomes an object, so a size read from a symbol table
     * must not decide how many. The callers infertop scans (the graph compute loop) are a few KiB.
     */
    static final int MAX_FUNCTION_BYTES = 1 << 20;

    private CallSiteScanner() {}

    /** One direct call of {@code caller}: where it is and where it goes, before names are attached. */
    public record DirectCall(long vaddr, int lengthBytes, long targetVaddr) {}

    /**
     * The call sites in {@code caller} that call the function named exactly {@code calleeName}: at its PLT stub,
     * or at its own address (a local, hidden or non-interposable definition in this file). In address order.
     */
    public static List<CallSite> findCalls(ElfFile elf, ElfSymbol caller, String calleeName) throws TargetException {
        return findCallsMatching(elf, caller, calleeName::equals);
    }

    /**
     * The call sites in {@code caller} whose callee name satisfies {@code calleeName}, each reported once under
     * the first matching name (PLT symbol first, then the functions defined at the target, exported first).
     */
    public static List<CallSite> findCallsMatching(ElfFile elf, ElfSymbol caller, Predicate<String> calleeName)
            throws TargetException {
        List<DirectCall> calls = directCalls(elf, caller);
        if (calls.isEmpty()) {
            return List.of();
        }
        PltResolver plt = PltResolver.of(elf);
        // Each target's name once (a crafted file calls one address with many names a hundred thousand times).
        Map<Long, Optional<String>> definedNames = new HashMap<>();
        List<CallSite> sites = new ArrayList<>();
        for (DirectCall call : calls) {
            ScanTimeLimit.checkInterrupted(elf.path());
            Optional<PltResolver.PltStub> stub = plt.stubAt(call.targetVaddr());
            String name = null;
            if (stub.isPresent() && calleeName.test(stub.get().symbolName())) {
                name = stub.get().symbolName();
            } else if (stub.isEmpty()) {
                name = definedNames.computeIfAbsent(call.targetVaddr(), target -> {
                    List<ElfSymbol> defined = elf.functionsAt(target);
                    return defined.stream().filter(s -> s.binding() != SymbolBinding.LOCAL).map(ElfSymbol::name)
                            .filter(calleeName).findFirst()
                            .or(() -> defined.stream().map(ElfSymbol::name).filter(calleeName).findFirst());
                }).orElse(null);
            }
            if (name != null) {
                sites.add(site(elf, caller, call, name, stub.isPresent()));
            }
        }
        return sites;
    }

    /**
     * Every direct call in {@code caller}, in address order. On x86_64 the function is decoded from its entry
     * to its end; an instruction the decoder cannot measure, or one running past the end, fails it.
     */
    public static List<DirectCall> directCalls(ElfFile elf, ElfSymbol caller) throws TargetException {
        byte[] code = codeOf(elf, caller);
        List<DirectCall> calls = new ArrayList<>();
        switch (elf.machine()) {
            case X86_64 -> {
                for (X86Decoder.Instruction instruction : decodeX86(elf, caller, code)) {
                    if (instruction.isCallRel32()) {
                        if (instruction.hasPrefix(0x66)) {
                            throw new TargetException(where(elf, caller, instruction.offset())
                                    + ": call with a 66 prefix, which the kernel's uprobe code refuses");
                        }
                        int end = instruction.offset() + instruction.length();
                        long next = caller.vaddr() + end;
                        calls.add(new DirectCall(caller.vaddr() + instruction.offset(), instruction.length(),
                                next + PltResolver.word(code, end - 4)));
                    }
                }
            }
            case AARCH64 -> {
                if ((caller.vaddr() & 3) != 0 || (code.length & 3) != 0) {
                    throw new TargetException(where(elf, caller, 0) + ": not a whole number of aarch64 instructions");
                }
                for (int at = 0; at < code.length; at += 4) {
                    int word = PltResolver.word(code, at);
                    if (Aarch64Instruction.of(word) == Aarch64Instruction.BL) {
                        long pc = caller.vaddr() + at;
                        calls.add(new DirectCall(pc, 4, Aarch64Instruction.BL.target(pc, word)));
                    }
                }
            }
        }
        return calls;
    }

    /** The x86_64 instructions of {@code function}, decoded linearly from its entry; errors name the function. */
    public static List<X86Decoder.Instruction> decodeX86(ElfFile elf, ElfSymbol function) throws TargetException {
        if (elf.machine() != Machine.X86_64) {
            throw new TargetException(elf.path() + " is " + elf.machine() + ", not x86_64");
        }
        return decodeX86(elf, function, codeOf(elf, function));
    }

    private static List<X86Decoder.Instruction> decodeX86(ElfFile elf, ElfSymbol function, byte[] code)
            throws TargetException {
        try {
            return X86Decoder.decodeAll(code, 0, code.length);
        } catch (TargetException e) {
            throw new TargetException("in " + function.name() + " of " + elf.path() + ": " + e.getMessage(), e);
        }
    }

    static byte[] codeOf(ElfFile elf, ElfSymbol function) throws TargetException {
        if (function.sizeBytes() <= 0) {
            throw new TargetException("function " + function.name() + " has no known size in " + elf.path()
                    + ": its instructions cannot be scanned");
        }
        if (function.sizeBytes() > MAX_FUNCTION_BYTES) {
            throw new TargetException("function " + function.name() + " claims " + function.sizeBytes()
                    + " bytes in " + elf.path() + " (at most " + MAX_FUNCTION_BYTES + " scanned)");
        }
        byte[] code = elf.readBytesAtVaddr(function.vaddr(), (int) function.sizeBytes());
        if (code.length != function.sizeBytes()) {
            throw new TargetException("function " + function.name() + " runs past its file-backed segment in "
                    + elf.path());
        }
        return code;
    }

    private static CallSite site(ElfFile elf, ElfSymbol caller, DirectCall call, String calleeName, boolean viaPlt)
            throws TargetException {
        String target = calleeName + (viaPlt ? "@plt" : "");
        String reason = switch (elf.machine()) {
            case X86_64 -> "call rel32 to " + target + ": emulated by the x86 uprobe code, not single-stepped";
            case AARCH64 -> "bl to " + target + ": simulated by the arm64 uprobe code, not single-stepped";
        };
        return new CallSite(caller, calleeName, call.vaddr(), elf.fileOffsetOf(call.vaddr()), call.lengthBytes(),
                call.vaddr() + call.lengthBytes(), call.targetVaddr(), viaPlt, CostClass.EMULATED, reason);
    }

    private static String where(ElfFile elf, ElfSymbol function, int offset) {
        return function.name() + "+0x" + Integer.toHexString(offset) + " in " + elf.path();
    }
}
