/**
 * One run of the tracing command in libbpf-bootstrap's order, a small class per stage: open the target, calibrate,
 * load, attach, poll, clean up, with one exit path; the overhead budget; the options and their checks.
 * <p>
 * May import: {@code agg}, {@code bpf}, {@code event}, {@code export}, {@code ffi}, {@code io}, {@code json}, {@code machine},
 * {@code metrics}, {@code model}, {@code snapshot}, {@code process}, {@code process.layout}, {@code tui},
 * {@code view}, {@code workload}. It wires the others together; only cli imports it.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.session;
