/**
 * The built-in workload: llama.cpp provisioning into the cache, synthetic models, the demo's clients.
 * <p>
 * May import: {@code ffi}, {@code workload.gguf}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.workload;
