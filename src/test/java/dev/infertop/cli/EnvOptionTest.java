package dev.infertop.cli;

import dev.infertop.session.UserError;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** --env NAME=VALUE: the one way a variable reaches a launched command; bad input is one usage line. */
class EnvOptionTest {
    @Test
    void entriesBecomeVariablesTheLastOfANameWinning() {
        assertEquals(Map.of("LD_LIBRARY_PATH", "/opt/llama/lib", "EMPTY", "", "A", "x=y"),
                InfertopCommand.parseEnv(List.of("LD_LIBRARY_PATH=/opt/llama/lib", "EMPTY=", "A=1", "A=x=y"), true));
    }

    @Test
    void aBadEntryOrNoCommandIsOneUsageLine() {
        for (String bad : List.of("NOEQUALS", "=value", "1ABC=x", "A-B=x", "A B=x", "A=\0")) {
            UserError e = assertThrows(UserError.class, () -> InfertopCommand.parseEnv(List.of(bad), true), bad);
            assertEquals(2, e.exitCode(), bad);
            assertTrue(e.getMessage().startsWith("--env takes NAME=VALUE") && !e.getMessage().contains("\n")
                    && !e.getMessage().contains("\0"), e.getMessage());
        }
        UserError e = assertThrows(UserError.class, () -> InfertopCommand.parseEnv(List.of("A=1"), false));
        assertEquals("--env sets the launched command's environment: use it with -- COMMAND", e.getMessage());
    }

    @Test
    void helpListsIt() {
        java.io.StringWriter out = new java.io.StringWriter();
        picocli.CommandLine commandLine = Main.commandLine("--help");
        commandLine.setOut(new java.io.PrintWriter(out));
        assertEquals(0, commandLine.execute("--help"));
        assertTrue(out.toString().contains("--env=NAME=VALUE"), out.toString());
    }
}
