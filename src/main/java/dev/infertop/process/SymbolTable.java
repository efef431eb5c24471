package dev.infertop.process;

/**
 * Which symbol table a symbol was read from: DYNSYM survives {@code strip --strip-all}, SYMTAB does not;
 * EH_FRAME marks a function of a stripped library named by infertop from its code and unwind tables
 * ({@link StrippedFunctions}).
 */
public enum SymbolTable {
    DYNSYM, SYMTAB, EH_FRAME
}
