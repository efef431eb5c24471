package dev.infertop.process;

/** One section header; offsets and sizes in bytes, {@code vaddr} 0 for sections not loaded. */
public record ElfSection(String name, int type, long flags, long vaddr, long fileOffset, long sizeBytes,
                         int link, long entrySizeBytes) {
    public static final int SHT_SYMTAB = 2;
    public static final int SHT_STRTAB = 3;
    public static final int SHT_RELA = 4;
    public static final int SHT_NOTE = 7;
    public static final int SHT_NOBITS = 8;
    public static final int SHT_DYNSYM = 11;
    public static final long SHF_ALLOC = 2;

    public boolean isAllocated() {
        return (flags & SHF_ALLOC) != 0;
    }
}
