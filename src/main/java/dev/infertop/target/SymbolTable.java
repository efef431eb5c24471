package dev.infertop.target;

/** Which symbol table a symbol was read from: DYNSYM survives {@code strip --strip-all}, SYMTAB does not. */
public enum SymbolTable {
    DYNSYM, SYMTAB
}
