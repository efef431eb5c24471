package dev.infertop.cli;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JvmOptionsTest {
    /** `infertop overhead` measures the JVM users run: the launcher script must pass the same options. */
    @Test
    void launcherScriptPassesExactlyTheseOptions() throws Exception {
        List<String> lines = Files.readAllLines(Path.of("src/scripts/infertop"));
        String exec = lines.stream().filter(line -> line.startsWith("exec ")).findFirst().orElseThrow();
        List<String> words = Arrays.asList(exec.split(" +"));
        int java = words.indexOf("\"$JAVA_HOME/bin/java\"");
        int jar = words.indexOf("-jar");
        assertTrue(java > 0 && jar > java, exec);
        // The AOT cache (when one is beside the jar) comes last: the fixed options are these, in this order.
        assertEquals("\"${aot_cache[@]}\"", words.get(jar - 1), exec);
        assertEquals(JvmOptions.forLauncher(), words.subList(java + 1, jar - 1));
    }

    @Test
    void keepsTheJvmSmall() {
        List<String> options = JvmOptions.forLauncher();
        assertTrue(options.contains("-XX:+UseSerialGC"), options.toString());
        assertTrue(options.contains("-XX:TieredStopAtLevel=1"), options.toString());
        assertTrue(options.contains("-XX:CICompilerCount=1"), options.toString());
        assertTrue(options.contains("-Xmx160m"), options.toString());
    }
}
