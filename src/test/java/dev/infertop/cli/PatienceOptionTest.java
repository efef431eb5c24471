package dev.infertop.cli;

import dev.infertop.session.UserError;
import dev.infertop.process.AttachPatience;
import dev.infertop.process.ScanTimeLimit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PatienceOptionTest {
    @AfterEach
    void back() {
        AttachPatience.set(1);
    }

    private static InfertopCommand parsed(String... args) {
        InfertopCommand command = new InfertopCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    @Test
    void patienceMultipliesTheLibraryScanLimit() {
        assertEquals(10_000, ScanTimeLimit.limitMs());
        parsed("--patience", "4", "-p", "1").toOptions(Map.of(), null);
        assertEquals(4, AttachPatience.factor());
        assertEquals(40_000, ScanTimeLimit.limitMs());
        assertEquals(java.time.Duration.ofSeconds(120), AttachPatience.scaled(java.time.Duration.ofSeconds(30)));
    }

    @Test
    void aPatienceOutOfRangeIsOneLineAndExitStatusTwo() {
        for (String bad : new String[] {"0", "101", "-3"}) {
            UserError e = assertThrows(UserError.class, () -> parsed("--patience", bad, "-p", "1").toOptions(Map.of(), null));
            assertEquals("--patience: must be 1 to 100, not " + bad, e.getMessage());
            assertEquals(2, e.exitCode());
        }
        assertEquals(1, AttachPatience.factor(), "a refused value changes nothing");
    }
}
