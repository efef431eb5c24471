package dev.infertop.cli;

import dev.infertop.ffi.NativeLibraryMissing;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    @Test
    void subcommandsAreAddedWhereTheArgumentsMayNameOne() {
        for (String[] args : new String[][] {{}, {"demo"}, {"model", "tiny", "x.gguf"}, {"dmeo"}, {"--help"},
                {"-p", "1", "-h"}, {"--version"}, {"--json", "demo"}}) {
            assertEquals(List.of("demo", "machine", "model", "overhead", "report", "replay", "diff"),
                    List.copyOf(Main.commandLine(args).getSubcommands().keySet()), String.join(" ", args));
        }
        for (String[] args : new String[][] {{"-p", "42"}, {"--json", "-n", "3", "-p", "42"},
                {"--json", "--", "llama-bench", "--help", "demo"}}) {
            assertTrue(Main.commandLine(args).getSubcommands().isEmpty(), String.join(" ", args));
        }
    }

    /** Only an attach keeps the start boost past the parse (dev.infertop.ffi.OwnPriority). */
    @Test
    void onlyAnAttachIsParsedAsOne() {
        for (String[] args : new String[][] {{"-p", "42"}, {"--json", "-n", "3", "-p", "42"},
                {"--follow", "llama-server"}}) {
            assertTrue(Main.attaches(Main.commandLine(args).parseArgs(args)), String.join(" ", args));
        }
        for (String[] args : new String[][] {{"--json", "--", "llama-bench", "-p", "42"}, {"demo"},
                {"report", "dir"}, {"-p", "42", "--help"}, {"--version"}, {"overhead", "--", "llama-bench"}}) {
            assertFalse(Main.attaches(Main.commandLine(args).parseArgs(args)), String.join(" ", args));
        }
    }

    @Test
    void topLevelHelpStillListsEverySubcommand() {
        StringWriter out = new StringWriter();
        CommandLine commandLine = Main.commandLine("--help");
        commandLine.setOut(new PrintWriter(out));
        assertEquals(0, commandLine.execute("--help"));
        for (String name : List.of("demo", "machine", "model", "overhead", "report", "replay", "diff")) {
            assertTrue(out.toString().contains("\n  " + name + " "), name + " in:\n" + out);
        }
    }
}
