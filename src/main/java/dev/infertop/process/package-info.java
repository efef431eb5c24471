/**
 * The traced process and its files: ELF symbols and sections, {@code /proc/PID/maps}, library resolution as ld.so
 * does it, probe placement and call sites, the target's memory and CPU time, the launched command.
 * <p>
 * May import: {@code ffi}, {@code io}, {@code model}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.process;
