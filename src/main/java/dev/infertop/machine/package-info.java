/**
 * {@code infertop machine}: the roofline ceilings (memory read bandwidth, FMA throughput) measured in a JVM of
 * their own and cached, and the cost of one uprobe hit under the running kernel.
 * <p>
 * May import: {@code ffi}, {@code io}, {@code model}, {@code process}, {@code workload}. {@code workload} only for
 * the cache directory.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.machine;
