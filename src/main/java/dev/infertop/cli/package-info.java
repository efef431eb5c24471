/**
 * The picocli commands ({@code infertop}, {@code demo}, {@code machine}, {@code overhead}, {@code report},
 * {@code replay}, {@code diff}, {@code model}): options parsed, then one call into the package that does the work; the JVM
 * options the launcher passes; the byte filter on standard output.
 * <p>
 * May import: {@code diff}, {@code ffi}, {@code io}, {@code json}, {@code machine}, {@code model}, {@code session}, {@code snapshot},
 * {@code process}, {@code tui}, {@code view}, {@code workload}. The top of the graph: nothing imports cli.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.cli;
