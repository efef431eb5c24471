package dev.infertop.process;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The PLT stubs of a library, each named by the symbol its GOT slot is relocated to.
 *
 * <p>A call to an exported function of the same library (ggml_barrier from ggml_graph_compute_thread) goes
 * through its PLT stub, because the symbol could be interposed: {@code call <ggml_barrier@plt>}. Each stub
 * jumps through one GOT slot, and the dynamic relocation of that slot (R_*_JUMP_SLOT in .rela.plt, or
 * R_*_GLOB_DAT in .rela.dyn for the .plt.got stubs of functions whose address is also taken) names the symbol.
 *
 * <p>x86_64 stubs are read entry by entry (sh_entsize, 16 when unset) in .plt, .plt.sec, .plt.got and .plt.bnd:
 * an optional endbr64, an optional bnd (f2) prefix, then {@code jmp *rel32(%rip)} (ff 25). With
 * {@code -z ibt} the lazy-binding entries in .plt push an index instead and the callable stubs are in .plt.sec.
 * aarch64 stubs in .plt are {@code [bti c;] adrp x16, page; ldr x17, [x16, #off]; add x16, x16, #off; br x17}.
 * PLT0 (the lazy resolver entry) jumps through a slot no relocation names, so it gets no name.
 */
public final class PltResolver {
    /** The instruction pattern of a stub, as seen in a library. */
    public enum StubKind {
        X86_JMP("jmp *GOT(%rip)"),
        X86_BND_JMP("bnd jmp *GOT(%rip)"),
        X86_ENDBR64_JMP("endbr64; jmp *GOT(%rip)"),
        X86_ENDBR64_BND_JMP("endbr64; bnd jmp *GOT(%rip)"),
        AARCH64_ADRP_LDR_BR("adrp x16; ldr x17, [x16]; add x16; br x17"),
        AARCH64_BTI_ADRP_LDR_BR("bti c; adrp x16; ldr x17, [x16]; add x16; br x17");

        private final String description;

        StubKind(String description) {
            this.description = description;
        }

        public String description() {
            return description;
        }
    }

    /** One stub: calls to {@code vaddr} reach {@code symbolName} through the GOT slot at {@code gotSlotVaddr}. */
    public record PltStub(long vaddr, String symbolName, long gotSlotVaddr, String sectionName, StubKind kind) {}

    private static final byte[] ENDBR64 = {(byte) 0xf3, 0x0f, 0x1e, (byte) 0xfa};
    private static final int AARCH64_BTI_C = 0xd503245f;

    private final List<PltStub> stubs;
    private final Map<Long, PltStub> byAddress;
    private final Map<String, List<PltStub>> bySymbol;

    private PltResolver(List<PltStub> stubs) {
        this.stubs = Collections.unmodifiableList(stubs);
        this.byAddress = new HashMap<>();
        this.bySymbol = new HashMap<>();
        for (PltStub stub : stubs) {
            byAddress.put(stub.vaddr(), stub);
            bySymbol.computeIfAbsent(stub.symbolName(), n -> new ArrayList<>(1)).add(stub);
        }
    }

    /** Reads the stubs and the dynamic relocations of {@code elf}. */
    public static PltResolver of(ElfFile elf) throws TargetException {
        Map<Long, String> slotSymbols = gotSlotSymbols(elf);
        List<PltStub> stubs = new ArrayList<>();
        for (ElfSection section : elf.sections()) {
            if (!section.isAllocated() || section.type() == ElfSection.SHT_NOBITS || section.sizeBytes() == 0) {
                continue;
            }
            switch (elf.machine()) {
                case X86_64 -> {
                    if (section.name().equals(".plt") || section.name().equals(".plt.sec")
                            || section.name().equals(".plt.got") || section.name().equals(".plt.bnd")) {
                        readX86Stubs(elf, section, slotSymbols, stubs);
                    }
                }
                case AARCH64 -> {
                    if (section.name().equals(".plt")) {
                        readAarch64Stubs(elf, section, slotSymbols, stubs);
                    }
                }
            }
        }
        return new PltResolver(stubs);
    }

    public List<PltStub> stubs() {
        return stubs;
    }

    /** The stub that starts at {@code vaddr}, if any. */
    public Optional<PltStub> stubAt(long vaddr) {
        return Optional.ofNullable(byAddress.get(vaddr));
    }

    /** The stubs of {@code symbolName}: usually one, none when the library never calls it through the PLT. */
    public List<PltStub> stubsFor(String symbolName) {
        return bySymbol.getOrDefault(symbolName, List.of());
    }

    private static Map<Long, String> gotSlotSymbols(ElfFile elf) throws TargetException {
        int jumpSlot = elf.machine() == Machine.X86_64 ? ElfRelocation.R_X86_64_JUMP_SLOT
                : ElfRelocation.R_AARCH64_JUMP_SLOT;
        int globDat = elf.machine() == Machine.X86_64 ? ElfRelocation.R_X86_64_GLOB_DAT
                : ElfRelocation.R_AARCH64_GLOB_DAT;
        Map<Long, String> slots = new HashMap<>();
        for (ElfSection section : elf.sections()) {
            if (section.type() != ElfSection.SHT_RELA || !section.isAllocated()) {
                continue;
            }
            for (ElfRelocation relocation : elf.relocations(section)) {
                boolean named = relocation.symbolIndex() != 0 && !relocation.symbolName().isEmpty();
                if (named && (relocation.type() == jumpSlot || relocation.type() == globDat)) {
                    slots.put(relocation.offset(), relocation.symbolName());
                }
            }
        }
        return slots;
    }

    private static void readX86Stubs(ElfFile elf, ElfSection section, Map<Long, String> slotSymbols,
                                      List<PltStub> into) throws TargetException {
        byte[] code = elf.readBytesAtVaddr(section.vaddr(), sectionBytes(elf, section));
        int entry = x86EntryBytes(elf, section);
        for (int at = 0; at + 6 <= code.length; at += entry) {
            int p = at;
            boolean endbr = p + 4 <= code.length && java.util.Arrays.equals(code, p, p + 4, ENDBR64, 0, 4);
            if (endbr) {
                p += 4;
            }
            boolean bnd = p < code.length && code[p] == (byte) 0xf2;
            if (bnd) {
                p++;
            }
            if (p + 6 > code.length || code[p] != (byte) 0xff || code[p + 1] != 0x25) {
                continue;
            }
            int rel32 = (code[p + 2] & 0xff) | (code[p + 3] & 0xff) << 8 | (code[p + 4] & 0xff) << 16
                    | (code[p + 5] & 0xff) << 24;
            long slot = section.vaddr() + p + 6 + rel32;
            String symbol = slotSymbols.get(slot);
            if (symbol != null) {
                StubKind kind = endbr ? (bnd ? StubKind.X86_ENDBR64_BND_JMP : StubKind.X86_ENDBR64_JMP)
                        : (bnd ? StubKind.X86_BND_JMP : StubKind.X86_JMP);
                into.add(new PltStub(section.vaddr() + at, symbol, slot, section.name(), kind));
            }
        }
    }

    private static void readAarch64Stubs(ElfFile elf, ElfSection section, Map<Long, String> slotSymbols,
                                         List<PltStub> into) throws TargetException {
        byte[] code = elf.readBytesAtVaddr(section.vaddr(), sectionBytes(elf, section));
        for (int at = 0; at + 8 <= code.length; at += 4) {
            int adrp = word(code, at);
            int ldr = word(code, at + 4);
            // adrp x16, label  /  ldr x17, [x16, #imm12 * 8]
            if ((adrp & 0x9f00001f) != 0x90000010 || (ldr & 0xffc003ff) != 0xf9400211) {
                continue;
            }
            long pc = section.vaddr() + at;
            long pageDelta = (long) signExtend(((adrp >>> 29) & 3) | ((adrp >>> 5) & 0x7ffff) << 2, 21) << 12;
            long slot = (pc & ~0xfffL) + pageDelta + (long) ((ldr >>> 10) & 0xfff) * 8;
            String symbol = slotSymbols.get(slot);
            if (symbol == null) {
                continue;
            }
            boolean bti = at >= 4 && word(code, at - 4) == AARCH64_BTI_C;
            into.add(new PltStub(bti ? pc - 4 : pc, symbol, slot, section.name(),
                    bti ? StubKind.AARCH64_BTI_ADRP_LDR_BR : StubKind.AARCH64_ADRP_LDR_BR));
        }
    }

    /** The largest PLT stub entry: a real one is 8 or 16 bytes; sh_entsize beyond is a corrupt header. */
    static final int MAX_X86_ENTRY_BYTES = 64;

    /**
     * The stride of a PLT section's stubs: sh_entsize, 16 when unset. Taken as a long and checked, because a
     * sh_entsize of 2^32 cast to int is 0, and a zero stride never leaves the section.
     */
    static int x86EntryBytes(ElfFile elf, ElfSection section) throws TargetException {
        long entry = section.entrySizeBytes();
        if (entry == 0) {
            return 16;
        }
        if (entry < 0 || entry > MAX_X86_ENTRY_BYTES) {
            throw new TargetException("corrupt ELF file " + elf.path() + ": " + section.name() + " has stubs of "
                    + Long.toUnsignedString(entry) + " bytes (sh_entsize; a PLT stub has 8 or 16)");
        }
        return (int) entry;
    }

    private static int sectionBytes(ElfFile elf, ElfSection section) throws TargetException {
        if (section.sizeBytes() < 0 || section.sizeBytes() > ElfFile.MAX_READ_BYTES) {
            throw new TargetException("corrupt ELF file " + elf.path() + ": " + section.name() + " of "
                    + Long.toUnsignedString(section.sizeBytes()) + " bytes (at most " + ElfFile.MAX_READ_BYTES
                    + " read)");
        }
        return (int) section.sizeBytes();
    }

    static int word(byte[] code, int at) {
        return (code[at] & 0xff) | (code[at + 1] & 0xff) << 8 | (code[at + 2] & 0xff) << 16
                | (code[at + 3] & 0xff) << 24;
    }

    static int signExtend(int value, int bits) {
        int shift = 32 - bits;
        return (value << shift) >> shift;
    }
}
