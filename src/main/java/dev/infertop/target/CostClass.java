package dev.infertop.target;

/**
 * What a uprobe hit costs, decided by the probed instruction. The kernel replays a few instructions itself
 * (x86 {@code push reg}, relative jmp/call) — measured ~0.8 µs per hit here; any other instruction is copied
 * to an out-of-line slot and single-stepped with a second trap — ~9.5 µs per hit.
 */
public enum CostClass {
    EMULATED, SINGLE_STEPPED
}
