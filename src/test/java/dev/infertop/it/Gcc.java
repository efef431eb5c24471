package dev.infertop.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hostile targets the tests write in C, compiled with the machine's gcc into the test's directory. */
final class Gcc {
    private Gcc() {}

    /** Writes {@code source} to {@code dir/output.c} and compiles it to {@code dir/output} (-O2 and {@code flags}). */
    static Path compile(Path dir, String source, String output, String... flags) throws Exception {
        Path c = Files.writeString(dir.resolve(output + ".c"), source);
        List<String> command = new ArrayList<>(List.of("gcc", "-O2", "-o", dir.resolve(output).toString(), c.toString()));
        command.addAll(List.of(flags));
        Process gcc = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(gcc.waitFor(120, TimeUnit.SECONDS) && gcc.exitValue() == 0, "gcc " + output + ": " + out);
        return dir.resolve(output);
    }
}
