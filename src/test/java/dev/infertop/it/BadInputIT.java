package dev.infertop.it;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every bad input ends the same way: exactly one line on stderr, "infertop: ...", no stack trace, nothing on
 * stdout, a non-zero exit (2 for usage errors), and nothing left in the kernel or in /tmp.
 */
class BadInputIT {
    private static Path bench;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
    }

    /** Runs infertop to its end and checks the one-line failure; returns that line. */
    private static String assertOneLineFailure(int expectedExit, Map<String, String> environment, String... args)
            throws Exception {
        Set<Path> gatesBefore = gateDirectories();
        String line;
        try (InfertopProcess infertop = InfertopProcess.start(environment, args)) {
            int status = infertop.waitFor(60);
            line = assertOneLine(List.copyOf(infertop.stderr), List.copyOf(infertop.stdout), status, expectedExit,
                    String.join(" ", args));
        }
        LeakCheck.assertNothingLeft();
        Set<Path> gatesNow = gateDirectories();
        gatesNow.removeAll(gatesBefore);
        assertEquals(Set.of(), gatesNow, "gate directories left behind");
        return line;
    }

    private static String assertOneLineFailure(int expectedExit, String... args) throws Exception {
        return assertOneLineFailure(expectedExit, Map.of(), args);
    }

    private static String assertOneLine(List<String> stderr, List<String> stdout, int status, int expectedExit,
                                        String what) {
        String shown = "infertop " + what + "\nstderr:\n" + String.join("\n", stderr) + "\nstdout:\n"
                + String.join("\n", stdout);
        assertEquals(expectedExit, status, "exit status; " + shown);
        assertEquals(1, stderr.size(), "exactly one line on stderr; " + shown);
        String line = stderr.getFirst();
        assertTrue(line.startsWith("infertop: "), shown);
        assertFalse(line.contains("\tat ") || line.contains("Exception"), "no stack trace; " + shown);
        assertEquals(List.of(), stdout, "nothing on stdout; " + shown);
        return line;
    }

    private static Set<Path> gateDirectories() throws IOException {
        try (Stream<Path> entries = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return entries.filter(p -> p.getFileName().toString().startsWith("infertop-gate-"))
                    .collect(TreeSet::new, Set::add, Set::addAll);
        }
    }

    private static String[] withBench(String... options) {
        List<String> args = new ArrayList<>(List.of(options));
        args.addAll(List.of("--", bench.toString(), "-m", tinyModel.toString(), "-p", "8", "-n", "8", "-r", "1"));
        return args.toArray(String[]::new);
    }

    @Test
    void noSuchPid() throws Exception {
        String line = assertOneLineFailure(1, "--json", "-p", "999999");
        assertTrue(line.contains("999999"), line);
    }

    @Test
    void pidWithoutLlamaLibrary() throws Exception {
        Process sleep = new ProcessBuilder("sleep", "60").start();
        try {
            String line = assertOneLineFailure(1, "--json", "-p", Long.toString(sleep.pid()));
            assertTrue(line.contains("no llama.cpp/ggml library"), line);
            assertTrue(sleep.isAlive(), "infertop left the process it refused alone");
        } finally {
            sleep.destroyForcibly();
            sleep.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /**
     * An application that links ggml in with every symbol hidden, then stripped: ggml's code is there (its
     * assertion strings say so), but no name to probe. The refusal says that, not "no ggml", and not --lib.
     */
    @Test
    void pidWhoseGgmlIsHiddenAndStripped(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path app = Gcc.compile(dir, """
                #include <stdio.h>
                #include <unistd.h>
                __attribute__((noinline, visibility("hidden"))) void ggml_abort(const char *f, int l, const char *m,
                        const char *x) { fprintf(stderr, m, x); fprintf(stderr, " %s:%d\\n", f, l); }
                __attribute__((noinline, visibility("hidden"))) int ggml_graph_compute(int n) {
                    if (n < 0) ggml_abort(__FILE__, __LINE__, "GGML_ASSERT(%s) failed", "n >= 0");
                    return n + 1;
                }
                int main(int argc, char **argv) { (void) argv; for (;;) { if (ggml_graph_compute(argc) < 0) return 1;
                    sleep(1); } }
                """, "hidden-ggml-app", "-s");
        Process target = new ProcessBuilder(app.toString()).start();
        try {
            String line = assertOneLineFailure(1, "--json", "-p", Long.toString(target.pid()));
            assertTrue(line.contains("hidden-ggml-app holds ggml's code (its GGML_ASSERT strings) but names none of its"
                    + " functions"), line);
            assertFalse(line.contains("--lib"), "naming the file would not help: " + line);
            assertTrue(target.isAlive(), "infertop left the process it refused alone");
        } finally {
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void notRoot() throws Exception {
        Path setpriv = Path.of("/usr/bin/setpriv");
        Requirements.require(Files.isExecutable(setpriv), "needs setpriv (util-linux) to drop root");
        // The jar under target/ may sit in a directory the unprivileged user cannot enter: copy it out.
        Path directory = Files.createTempDirectory("infertop-it-nobody-");
        Path jar = directory.resolve("infertop.jar");
        try {
            Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.copy(Requirements.jar(), jar, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(jar, PosixFilePermissions.fromString("rw-r--r--"));
            String java = ProcessHandle.current().info().command().orElse("java");
            Process process = new ProcessBuilder(setpriv.toString(), "--reuid=65534", "--regid=65534",
                    "--clear-groups", java, "--enable-native-access=ALL-UNNAMED", "-XX:-UsePerfData",
                    "-XX:+UseSerialGC", "-jar", jar.toString(), "--json", "-p", Long.toString(ProcessHandle.current().pid()))
                    .directory(directory.toFile()).start();
            process.getOutputStream().close();
            CompletableFuture<List<String>> stdoutFuture = CompletableFuture.supplyAsync(() -> readLines(process.getInputStream()));
            List<String> stderr = readLines(process.getErrorStream());
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "infertop as nobody did not exit");
            String line = assertOneLine(stderr, stdoutFuture.get(), process.exitValue(), 1, "(as uid 65534)");
            assertTrue(line.contains("root"), line);
        } finally {
            Files.deleteIfExists(jar);
            Files.deleteIfExists(directory);
        }
        LeakCheck.assertNothingLeft();
    }

    private static List<String> readLines(InputStream in) {
        try (in) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return text.isEmpty() ? List.of() : text.lines().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void kernelWithoutBtf() throws Exception {
        String line = assertOneLineFailure(1, Map.of("INFERTOP_KERNEL_BTF", "/nonexistent"), withBench("--json"));
        assertTrue(line.contains("BTF"), line);
    }

    @Test
    void btfFileThatIsNotBtf() throws Exception {
        String line = assertOneLineFailure(1, withBench("--json", "--btf", "/etc/hostname"));
        assertTrue(line.contains("BTF") && line.contains("/etc/hostname"), line);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/no/such/cmd", "no-such-command-xyz"})
    void commandThatDoesNotExist(String command) throws Exception {
        String line = assertOneLineFailure(1, "--json", "--", command, "arg");
        assertTrue(line.contains(command), line);
    }

    @Test
    void commandWithoutLlamaLibrary() throws Exception {
        String line = assertOneLineFailure(1, "--json", "--", "/bin/true");
        assertTrue(line.contains("no llama.cpp/ggml library"), line);
    }

    @Test
    void libraryThatDoesNotExist() throws Exception {
        // The command is a real llama.cpp program: the missing --lib must still stop infertop before it starts.
        String line = assertOneLineFailure(1, withBench("--json", "--lib", "/no/such.so"));
        assertTrue(line.contains("/no/such.so"), line);
    }

    @Test
    void usageErrorsExitTwo() throws Exception {
        assertOneLineFailure(2, "--json");
        assertOneLineFailure(2, withBench("--json", "-p", "1"));
        assertOneLineFailure(2, withBench("--json", "--layers", "bogus"));
        assertOneLineFailure(2, withBench("--json", "-d", "0"));
        assertOneLineFailure(2, withBench("--batch", "--json"));
        assertOneLineFailure(2, withBench("--json", "--no-such-option"));
    }
}
