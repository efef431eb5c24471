/**
 * Struct offsets read from the target's own library at attach time, in a sandboxed child process that runs it,
 * checked against invariants and cached by build.
 * <p>
 * May import: {@code ffi}, {@code io}, {@code model}, {@code process}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.process.layout;
