/**
 * BPF object lifecycle (open, configure, load, attach, free), the probes each layer attaches and where (sites
 * found in the target's code, cached), uprobe and tracepoint links, the ring-buffer reader, the control maps the
 * probes are steered with, perf counters per CPU, and the kernel's run-time stats of the programs.
 * <p>
 * May import: {@code event}, {@code ffi}, {@code io}, {@code model}, {@code process}. {@code event} only for the
 * {@code RecordHandler} the ring buffer feeds: decoding is event's, never the other way.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.bpf;
