/**
 * The records the probes send, mirrored from native/events.h ({@link dev.infertop.event.EventLayout}), decoded in
 * place without allocation ({@link dev.infertop.event.EventDecoder}) into {@link dev.infertop.event.TraceListener}
 * calls; the names the target's tensors carry, bounded and sanitised.
 * <p>
 * May import: {@code model}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.event;
