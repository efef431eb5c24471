package dev.infertop.cli;

import dev.infertop.ffi.NativeLibraryMissing;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MainTest {
    @Test
    void aMissingLibraryFoundInAClassInitialiserIsReportedByItsMessage() {
        NativeLibraryMissing missing = new NativeLibraryMissing("libbpf.so.1 lacks bpf_x: infertop needs libbpf 1.1");
        // What a holder class's initialiser throws at the first use of a function the library lacks.
        Throwable thrown = new IllegalStateException(new ExceptionInInitializerError(missing));
        assertEquals(missing, Main.missingLibraryIn(thrown).orElseThrow());
        assertTrue(Main.missingLibraryIn(new ExceptionInInitializerError(new IllegalStateException("x"))).isEmpty());
        Throwable looping = new RuntimeException("a");
        Throwable other = new RuntimeException("b", looping);
        looping.initCause(other);
        assertTrue(Main.missingLibraryIn(looping).isEmpty(), "a cause chain that loops ends");
    }
}
