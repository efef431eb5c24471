package dev.infertop.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    /**
     * The launcher passes the AOT cache beside the jar only when it is newer than the jar (the JVM refuses one of
     * an earlier build, warning at every start) and only root or the jar's owner can write it (the JVM maps it
     * as code). Read off the exec line bash -x prints; the JVM then fails on the stand-in jar, which is fine.
     */
    @Test
    void launcherUsesOnlyAFreshAotCacheNoOneElseCanWrite(@TempDir Path dir) throws Exception {
        Path jar = Files.writeString(dir.resolve("infertop.jar"), "a stand-in");
        Path aot = Files.writeString(dir.resolve("infertop.aot"), "a stand-in");
        Files.setPosixFilePermissions(aot, PosixFilePermissions.fromString("rw-r--r--"));
        Files.setLastModifiedTime(jar, FileTime.fromMillis(1_000_000_000_000L));
        Files.setLastModifiedTime(aot, FileTime.fromMillis(1_000_000_001_000L));
        assertTrue(launcherExec(jar).contains("-XX:AOTCache=" + aot), "a fresh cache is used");
        Files.setLastModifiedTime(aot, FileTime.fromMillis(999_999_999_000L));
        assertFalse(launcherExec(jar).contains("AOTCache"), "a cache older than the jar is not");
        Files.setLastModifiedTime(aot, FileTime.fromMillis(1_000_000_001_000L));
        Files.setPosixFilePermissions(aot, PosixFilePermissions.fromString("rw-rw-r--"));
        assertFalse(launcherExec(jar).contains("AOTCache"), "a cache others may write is not");
    }

    /** The java command line the launcher execs for {@code jar}, as bash -x prints it. */
    private static String launcherExec(Path jar) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("bash", "-x", "src/scripts/infertop", "--version");
        builder.environment().put("INFERTOP_JAR", jar.toString());
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        Process process = builder.start();
        String trace = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the launcher did not end");
        return trace.lines().filter(line -> line.startsWith("+ exec ")).findFirst()
                .orElseThrow(() -> new AssertionError("no exec line in:\n" + trace));
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
