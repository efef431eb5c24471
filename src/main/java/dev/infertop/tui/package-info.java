/**
 * The live view's terminal session (restored on every exit path), its loop (woken by a snapshot, a key or a
 * resize) and the key table.
 * <p>
 * May import: {@code io}, {@code model}, {@code process}, {@code view}. No aggregator: it draws snapshots only.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.tui;
