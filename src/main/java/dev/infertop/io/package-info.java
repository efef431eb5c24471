/**
 * Files: written at predictable names without following links, the launched command's log, cache files read
 * bounded into records, infertop's config files read as files someone else controls.
 * <p>
 * May import: {@code ffi}, {@code model}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.io;
