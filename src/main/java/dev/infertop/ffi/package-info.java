/**
 * Hand-written FFM bindings (libbpf, libc, perf_event_open, NSS), one class per library, each function bound at
 * its first use; errno captured; files someone else controls opened safely.
 * <p>
 * May import: no other infertop package. The bottom of the graph with {@code model}: it imports no other infertop
 * package.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.ffi;
