package dev.infertop.session;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The test hook the exit-path ITs use, and the one line a fatal failure leaves. */
class InjectedFaultTest {
    @Test
    void unsetDoesNothing() {
        InjectedFault none = InjectedFault.parse(null);
        for (int i = 0; i < 10; i++) {
            assertDoesNotThrow(none::onTick);
        }
        assertDoesNotThrow(() -> InjectedFault.parse("").onTick());
    }

    @Test
    void anOutOfMemoryErrorAtTheNthTickExactly() {
        InjectedFault fault = InjectedFault.parse("oom-after-ticks:3");
        fault.onTick();
        fault.onTick();
        OutOfMemoryError error = assertThrows(OutOfMemoryError.class, fault::onTick);
        assertEquals("injected by INFERTOP_TEST_INJECT=oom-after-ticks:3", error.getMessage());
        assertDoesNotThrow(fault::onTick, "once");
    }

    @Test
    void aRealStackOverflow() {
        InjectedFault fault = InjectedFault.parse("stack-overflow-after-ticks:1");
        assertThrows(StackOverflowError.class, fault::onTick);
    }

    @Test
    void aMisspeltHookIsAUsageError() {
        for (String spec : new String[] {"oom", "oom-after-ticks:", "oom-after-ticks:x", "oom-after-ticks:-1",
                "leak-after-ticks:3"}) {
            UserError error = assertThrows(UserError.class, () -> InjectedFault.parse(spec), spec);
            assertEquals(2, error.exitCode());
        }
    }

    @Test
    void theFatalLineIsOneLineNamingTheErrorAndTheThread() {
        assertEquals("infertop: fatal error in thread infertop-budget: java.lang.OutOfMemoryError: Java heap space"
                        + " (run with INFERTOP_DEBUG=1 for details, and please report it)",
                FatalErrors.line(new OutOfMemoryError("Java heap space"), "infertop-budget"));
        assertEquals("infertop: fatal error: java.lang.StackOverflowError (run with INFERTOP_DEBUG=1 for details,"
                + " and please report it)", FatalErrors.line(new StackOverflowError(), null));
        assertEquals("infertop: internal error in thread x: java.lang.IllegalStateException: a\\x0ab (run with"
                        + " INFERTOP_DEBUG=1 for details, and please report it)",
                FatalErrors.line(new IllegalStateException("a\nb"), "x"));
    }
}
