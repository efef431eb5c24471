package dev.infertop.process;

import java.util.Optional;

/** The instruction sets infertop can place uprobes in, with their ELF e_machine codes. */
public enum Machine {
    X86_64(62, "x86_64-linux-gnu"),
    AARCH64(183, "aarch64-linux-gnu");

    private final int elfCode;
    private final String debianMultiarch;

    Machine(int elfCode, String debianMultiarch) {
        this.elfCode = elfCode;
        this.debianMultiarch = debianMultiarch;
    }

    public int elfCode() {
        return elfCode;
    }

    /** The multiarch tuple of the library directories ld.so searches by default on Debian-like systems. */
    public String debianMultiarch() {
        return debianMultiarch;
    }

    public static Optional<Machine> fromElfCode(int code) {
        for (Machine machine : values()) {
            if (machine.elfCode == code) {
                return Optional.of(machine);
            }
        }
        return Optional.empty();
    }
}
