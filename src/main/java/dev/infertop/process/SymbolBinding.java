package dev.infertop.process;

/** ELF symbol binding (STB_*): LOCAL symbols are visible only in .symtab and vanish with strip. */
public enum SymbolBinding {
    LOCAL, GLOBAL, WEAK, GNU_UNIQUE, OTHER;

    static SymbolBinding fromElf(int stBind) {
        return switch (stBind) {
            case 0 -> LOCAL;
            case 1 -> GLOBAL;
            case 2 -> WEAK;
            case 10 -> GNU_UNIQUE;
            default -> OTHER;
        };
    }
}
