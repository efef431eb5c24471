/**
 * {@code infertop diff}: two runs (snapshot directories or {@code --json} logs) read into the same figures, compared
 * per generated token with a rank test over their intervals, and written as text, JSON or an HTML report.
 * Reads through {@code snapshot} (a snapshot directory checked as {@code report} checks it) and {@code model};
 * nothing here is read by the tracing side.
 * <p>
 * May import: {@code export}, {@code ffi}, {@code history}, {@code json}, {@code model}, {@code snapshot}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.diff;
