package dev.infertop.it;

import dev.infertop.cli.JvmOptions;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A target that chose a hostile name: llama-bench run through a link named {@code ESC ] 0 ; T BEL}, C1 CSI
 * (U+009B), DEL, "bench" (14 bytes: all of it is also the kernel's comm, and the argv0 infertop labels it
 * with). Traced in --batch text and --json (valid JSON), and in the live view in a real terminal (tmux): the
 * name shows as escapes, never acts (the pane's title stays), and the view keeps drawing. A link planted at
 * a name infertop writes (--dag FILE, the DAG of key d) is refused with one line, its target untouched.
 */
class HostileNameIT {
    /** What the shell's printf makes of it: the name as bytes, and as infertop shows it. */
    private static final String NAME_PRINTF = "\\033]0;T\\007\\302\\233\\177bench";
    private static final String NAME_SHOWN = "\\x1b]0;T\\x07\\x9b\\x7fbench";
    private static final Path LAUNCHER = Path.of("src/scripts/infertop").toAbsolutePath();

    private static Path bench;
    private static Path tinyModel;

    @TempDir
    Path dir;

    private TmuxPane pane;
    private final List<Process> started = new ArrayList<>();

    @BeforeAll
    static void requirements() {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (pane != null) {
            pane.close();
        }
        for (Process process : started) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The link to llama-bench under the hostile name in {@link #dir}, made by the shell (bytes, not a locale). */
    private void linkBenchUnderHostileName() throws Exception {
        Process ln = new ProcessBuilder("sh", "-c", "ln -s \"$0\" \"$1/$(printf '" + NAME_PRINTF + "')\"",
                bench.toString(), dir.toString()).inheritIO().start();
        assertEquals(0, ln.waitFor());
    }

    /**
     * infertop as the launcher runs it, through a shell that passes the hostile name as argv bytes: {@code
     * infertop OPTIONS -- ./NAME -m tiny.gguf -p 0 -n 0 -pg 32,32 -r REPS -t 2}, stdout and stderr to files.
     */
    private Process infertop(Path stdout, Path stderr, int repetitions, String... options) throws Exception {
        List<String> command = new ArrayList<>(List.of("sh", "-c",
                "cd \"$0\" && exec \"$@\" -- \"./$(printf '" + NAME_PRINTF + "')\" -m " + tinyModel
                        + " -p 0 -n 0 -pg 32,32 -r " + repetitions + " -t 2",
                dir.toString(), ProcessHandle.current().info().command().orElse("java")));
        command.addAll(JvmOptions.forLauncher());
        command.addAll(List.of("-jar", Requirements.jar().toAbsolutePath().toString()));
        command.addAll(List.of(options));
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
        builder.environment().put("LC_ALL", "C.UTF-8"); // argv decoded as UTF-8: the name reaches infertop whole
        Process process = builder.start();
        started.add(process);
        return process;
    }

    /** No byte of {@code output} acts on a terminal: no C0 but line feed, carriage return and tab, no DEL, no C1. */
    private static void assertNoRawControl(String what, byte[] output) {
        String text = new String(output, StandardCharsets.UTF_8);
        text.codePoints().forEach(cp -> assertFalse((cp < 0x20 && cp != '\n' && cp != '\r' && cp != '\t')
                || (cp >= 0x7f && cp <= 0x9f), what + " holds raw U+" + Integer.toHexString(cp) + ":\n" + text));
    }

    @Test
    void batchTextShowsTheNameAsEscapes() throws Exception {
        linkBenchUnderHostileName();
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process infertop = infertop(out, err, 3, "--batch", "-d", "0.5");
        assertTrue(infertop.waitFor(120, TimeUnit.SECONDS), "infertop --batch did not end");
        String stdout = Files.readString(out);
        assertEquals(0, infertop.exitValue(), stdout + Files.readString(err));
        assertTrue(stdout.contains(" " + NAME_SHOWN), "the batch header names the target visibly:\n" + stdout);
        assertNoRawControl("stdout", Files.readAllBytes(out));
        assertNoRawControl("stderr", Files.readAllBytes(err));
        LeakCheck.assertNothingLeft();
    }

    @Test
    void jsonStaysValidAndHoldsNoRawControl() throws Exception {
        linkBenchUnderHostileName();
        Path out = dir.resolve("out.json");
        Path err = dir.resolve("err.txt");
        Process infertop = infertop(out, err, 3, "--json", "-d", "0.5");
        assertTrue(infertop.waitFor(120, TimeUnit.SECONDS), "infertop --json did not end");
        assertEquals(0, infertop.exitValue(), Files.readString(err));
        assertNoRawControl("stdout", Files.readAllBytes(out));
        List<String> lines = Files.readAllLines(out);
        assertFalse(lines.isEmpty(), Files.readString(err));
        ObjectMapper json = new ObjectMapper();
        for (String line : lines) {
            JsonNode object = json.readTree(line); // every line valid JSON
            assertEquals(NAME_SHOWN, object.path("command").asText(), line);
            assertTrue(object.path("limits").path("tensor_names").asInt() > 0, line);
            assertEquals(0, object.path("limits").path("name_records_dropped").asLong(), line);
        }
        assertTrue(json.readTree(lines.getLast()).path("final").asBoolean());
        LeakCheck.assertNothingLeft();
    }

    @Test
    void theLiveViewSurvivesTheNameAndTheTerminalTitleStays() throws Exception {
        TmuxPane.require();
        linkBenchUnderHostileName();
        Path victim = Files.writeString(dir.resolve("victim"), "precious\n");
        String session = "infertop-hostile-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100000;
        pane = TmuxPane.startShell(session, 120, 30, dir, "LC_ALL=C.UTF-8 " + LAUNCHER + " -d 0.5 -- \"./$(printf \""
                + NAME_PRINTF + "\")\" -m " + tinyModel + " -p 0 -n 0 -pg 32,32 -r 100000 -t 2");
        pane.keepSize();
        String title = paneTitle(session);

        String screen = pane.awaitScreen("the target named with escapes", s -> s.contains(NAME_SHOWN), 60);
        Matcher pid = Pattern.compile("pid (\\d+) " + Pattern.quote(NAME_SHOWN)).matcher(screen);
        assertTrue(pid.find(), screen);
        // Several ticks later the view still draws (Lanterna threw on a control character: the view ended).
        pane.awaitScreen("operator rows", s -> s.contains("MUL_MAT"), 60);
        Thread.sleep(3000);
        screen = pane.capture();
        assertTrue(screen.contains(NAME_SHOWN) && !screen.contains("EXITED-"), screen);
        assertEquals(title, paneTitle(session), "the target's name set the terminal's title");
        assertNotEquals("T", paneTitle(session));

        // Key d writes infertop-dag-PID-HHMMSS.dot in the working directory: plant links at the next names.
        DateTimeFormatter hhmmss = DateTimeFormatter.ofPattern("HHmmss");
        LocalTime now = LocalTime.now();
        for (int s = -2; s <= 20; s++) {
            Files.createSymbolicLink(dir.resolve("infertop-dag-" + pid.group(1) + "-" + now.plusSeconds(s).format(hhmmss)
                    + ".dot"), victim);
        }
        pane.keys("d");
        screen = pane.awaitScreen("the refused DAG", s -> s.contains("is a symbolic link"), 20);
        assertEquals("precious\n", Files.readString(victim));

        pane.keys("q");
        pane.awaitScreen("the exit", s -> s.contains("EXITED-"), 30);
        assertEquals(title, paneTitle(session));
        LeakCheck.assertNothingLeft();
    }

    private static String paneTitle(String session) throws Exception {
        return Processes.output("/usr/bin/tmux", "-L", session, "display-message", "-p", "-t", session,
                "#{pane_title}").strip();
    }

    @Test
    void aLinkAtTheDagFileIsRefusedWithOneLine() throws Exception {
        Path victim = Files.writeString(dir.resolve("victim"), "precious\n");
        Path dag = Files.createSymbolicLink(dir.resolve("decode.dot"), victim);
        linkBenchUnderHostileName();
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process infertop = infertop(out, err, 1, "--batch", "--dag", dag.toString());
        assertTrue(infertop.waitFor(60, TimeUnit.SECONDS));
        assertEquals(2, infertop.exitValue());
        List<String> lines = Files.readAllLines(err);
        assertEquals(List.of("infertop: --dag " + dag + " is a symbolic link: infertop does not write through links"
                + " (it runs as root); remove it or choose another name"), lines);
        assertEquals("precious\n", Files.readString(victim));
        LeakCheck.assertNothingLeft();
    }
}
