package dev.infertop.process;

/**
 * What a uprobe hit costs, decided by the probed instruction. The kernel replays a few instructions itself
 * (x86 {@code push reg}, relative jmp/call); any other instruction is copied to an out-of-line slot and
 * single-stepped with a second trap, which costs several times as much (measurements.md, "Machines").
 */
public enum CostClass {
    EMULATED, SINGLE_STEPPED
}
