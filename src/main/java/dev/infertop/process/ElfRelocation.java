package dev.infertop.process;

/**
 * One RELA entry: at link-time address {@code offset} (for a GOT slot, the slot itself) the dynamic linker
 * stores a value of relocation {@code type} computed from symbol {@code symbolName} and {@code addend}.
 */
public record ElfRelocation(long offset, int type, int symbolIndex, String symbolName, long addend) {
    public static final int R_X86_64_GLOB_DAT = 6;
    public static final int R_X86_64_JUMP_SLOT = 7;
    public static final int R_AARCH64_GLOB_DAT = 1025;
    public static final int R_AARCH64_JUMP_SLOT = 1026;
}
