/**
 * A GGUF v3 writer: header, metadata and tensor data, streamed.
 * <p>
 * May import: {@code io}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.workload.gguf;
