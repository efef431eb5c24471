package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.process.layout.ConstructorLibrary;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hostile target: a copy of the llama.cpp build whose libggml-base was given a DT_NEEDED library with an ELF
 * constructor (patchelf, RUNPATH $ORIGIN), started as {@code nobody}; then {@code infertop -p PID} as root with
 * the operator layer. Before layout calibration moved into an unprivileged child, infertop's root JVM dlopened
 * that libggml-base and the constructor ran as uid 0. The constructor appends who ran it to a marker file: no
 * line may say uid 0, and the line written inside infertop's calibration child must show it without
 * privileges (no_new_privs, no capabilities, no groups).
 */
class HostileLibraryIT {
    private static final String NOBODY = "65534";

    private static LlamaCppWorkload workload;
    private static Path tinyModel;

    private Path copy;
    private Process target;

    @BeforeAll
    static void requirements() {
        workload = Requirements.canTraceLlamaCpp();
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/patchelf")),
                "needs patchelf (apt-get install patchelf; src/scripts/setup.sh installs it)");
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/setpriv")), "needs setpriv (util-linux)");
        Requirements.require(ConstructorLibrary.ccAvailable(), "needs cc to build the hostile library");
        tinyModel = Models.preset("tiny");
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (target != null) {
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
        }
        if (copy != null) {
            try (Stream<Path> tree = Files.walk(copy)) {
                for (Path path : tree.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }

    @Test
    void aConstructorInTheTargetsLibraryNeverRunsAsRootInInfertop() throws Exception {
        Path marker = ConstructorLibrary.newMarker(copyWithHostileLibrary("libhostile.so").resolve("marker"));
        ConstructorLibrary.build(copy.resolve("libhostile.so"), marker, 0, null);
        Path libggmlBase = startBenchAsNobody();
        List<Map<String, String>> targetOnly = ConstructorLibrary.records(marker);
        for (int i = 0; i < 100 && targetOnly.isEmpty(); i++) { // constructors run once every object is mapped
            Thread.sleep(50);
            targetOnly = ConstructorLibrary.records(marker);
        }
        assertEquals(1, targetOnly.size(), "the target itself ran the constructor, as nobody: " + targetOnly);
        assertEquals(NOBODY, targetOnly.getFirst().get("uid"));

        JsonNode total;
        Path cache = Files.createTempDirectory(copy, "cache-"); // a fresh layout cache: calibration must happen
        try (InfertopProcess infertop = InfertopProcess.start(Map.of("INFERTOP_CACHE", cache.toString()),
                "--json", "-d", "0.5", "--layers", "token,graph,operator", "-p", Long.toString(target.pid()))) {
            infertop.awaitStderr("probes attached", 120);
            // On a loaded 2-core machine llama.cpp can stall for whole intervals: wait for graphs, not a count.
            awaitOperatorGraphs(infertop, 120);
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(30), infertop.stderrText());
            total = infertop.finalObject();
            System.out.println("hostile libggml-base: operator layer " + total.path("layers").path("operator")
                    + "\nmarker:\n" + String.join("\n", Files.readAllLines(marker)) + "\nstderr:\n"
                    + infertop.stderrText());
        } finally {
            LeakCheck.assertNothingLeft();
        }

        List<Map<String, String>> records = ConstructorLibrary.records(marker);
        for (Map<String, String> record : records) {
            assertFalse("0".equals(record.get("uid")) || "0".equals(record.get("euid")),
                    "the hostile constructor ran as root: " + record.get("line"));
        }
        List<Map<String, String>> inInfertop = records.stream().filter(r -> r.get("exe").endsWith("/java")).toList();
        JsonNode operator = total.path("layers").path("operator");
        // Either outcome keeps root safe; this copy is a working build, so calibrating it in the child works.
        assertEquals("on", operator.path("state").asText(), "calibrated in the child, or one line why not: " + operator);
        assertTrue(total.get("op_graphs").asLong() > 0, "the calibrated layout reads real graphs: " + total);
        // The constructor did run inside infertop's calibration children (libggml-base's, and libllama's, which
        // loads libggml-base): each as the target's user, without privileges.
        assertFalse(inInfertop.isEmpty(), "a calibration child loaded the library: " + records);
        assertTrue(inInfertop.size() <= 2, "one child per calibrated library: " + records);
        for (Map<String, String> child : inInfertop) {
            assertEquals(NOBODY, child.get("uid"), child.get("line"));
            assertEquals("1", child.get("nnp"), child.get("line"));
            assertEquals("0000000000000000", child.get("capeff"), child.get("line"));
            assertEquals("0000000000000000", child.get("capbnd"), child.get("line"));
            assertEquals("", child.get("groups"), child.get("line"));
        }
    }

    /**
     * A hostile library whose constructor forks a grandchild that types a command into its terminal (TIOCSTI), at
     * once and 2 s later; infertop runs from an interactive root shell in tmux, as a user runs it, with a fresh
     * layout cache so that calibration loads the library. The calibration child used to share that terminal: the
     * grandchild, as nobody, typed into root's shell, which ran the command as root after infertop exited. Now
     * the sandboxed grandchild has no terminal and its ioctl is refused, the command never runs and never shows,
     * and nothing it started outlives the calibration.
     */
    @Test
    void aGrandchildOfTheCalibrationCannotTypeIntoRootsTerminal() throws Exception {
        TmuxPane.require();
        Path marker = ConstructorLibrary.newMarker(copyWithHostileLibrary("libtyper.so").resolve("marker"));
        Path typed = copy.resolve("typed-as-root");
        ConstructorLibrary.build(copy.resolve("libtyper.so"), marker, 0, null, "touch " + typed + "\n");
        Path libggmlBase = startBenchAsNobody();
        Path cache = Files.createTempDirectory(copy, "cache-");
        String session = "hostile-typer-" + ProcessHandle.current().pid();
        try (TmuxPane pane = TmuxPane.startShell(session, 160, 40, copy, "INFERTOP_CACHE=" + cache + " "
                + Path.of("src/scripts/infertop").toAbsolutePath() + " --json -n 4 -d 0.5 --layers token,graph,operator"
                + " -p " + target.pid() + " >" + copy.resolve("out.json") + " 2>" + copy.resolve("err.txt")
                + "; echo INFERTOP-DONE-$?; sh -i")) {
            pane.awaitScreen("infertop's end, then the interactive shell", s -> s.contains("INFERTOP-DONE-"), 180);
            Thread.sleep(4000); // the grandchild's second try, and the shell reading whatever was typed
            String screen = pane.capture();
            String err = Files.readString(copy.resolve("err.txt"));
            assertTrue(screen.contains("INFERTOP-DONE-0"), screen + "\n" + err);
            assertFalse(Files.exists(typed), "a command typed by the library ran as root; screen:\n" + screen);
            assertFalse(screen.contains("touch " + typed), "text typed by the library reached root's terminal:\n" + screen);
            assertTrue(err.contains("layers token on, graph on, operator on"), "calibrated, in the child: " + err);
        }
        List<Map<String, String>> sandboxed = ConstructorLibrary.records(marker).stream()
                .filter(r -> r.containsKey("typer") && "1".equals(r.get("sti0"))).toList();
        assertFalse(sandboxed.isEmpty(), "the sandboxed grandchild tried, and TIOCSTI was refused (EPERM): "
                + Files.readAllLines(marker));
        // A second try 2 s later is seen only where the child was still calibrating then (a loaded machine):
        // refused alike, and nothing of it is left once the calibration ended (below).
        assertTrue(sandboxed.stream().allMatch(r -> "6".equals(r.get("tty_open_errno")) && "1".equals(r.get("sti1"))
                && "1".equals(r.get("sti2"))), "no terminal in the sandbox, every push refused: " + sandboxed);
        for (ProcessHandle process : ProcessHandle.allProcesses().toList()) {
            if (process.pid() == target.pid()) {
                continue;
            }
            try {
                assertFalse(Files.readString(Path.of("/proc/" + process.pid() + "/maps")).contains("libtyper.so"),
                        "pid " + process.pid() + " still maps the hostile library: " + process.info());
            } catch (IOException e) {
                // gone, or not ours to read
            }
        }
        LeakCheck.assertNothingLeft();
    }

    /**
     * A copy of the source build (in {@link #copy}) whose libggml-base needs {@code library} (to be built there by
     * the caller), found through RUNPATH $ORIGIN; returns the copy's directory.
     */
    private Path copyWithHostileLibrary(String library) throws Exception {
        copy = Files.createTempDirectory("infertop-hostile-");
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
        copyBuild(workload.sourceBuildTool("llama-bench").getParent(), copy);
        Path model = Files.copy(tinyModel, copy.resolve("tiny.gguf"));
        Files.setPosixFilePermissions(model, PosixFilePermissions.fromString("rw-r--r--"));
        Path libggmlBase = copy.resolve("libggml-base.so").toRealPath();
        // Two runs: patchelf 0.14 given both options at once writes a RUNPATH pointing at the new NEEDED string.
        run("patchelf", "--set-rpath", "$ORIGIN", libggmlBase.toString());
        run("patchelf", "--add-needed", library, libggmlBase.toString());
        String dynamic = run("readelf", "-d", libggmlBase.toString());
        assertTrue(dynamic.contains("Shared library: [" + library + "]") && dynamic.contains("runpath: [$ORIGIN]"),
                "DT_NEEDED and RUNPATH $ORIGIN added:\n" + dynamic);
        return copy;
    }

    /** The copy's llama-bench started as nobody (a long run), once its libggml-base is mapped; that library. */
    private Path startBenchAsNobody() throws Exception {
        Path libggmlBase = copy.resolve("libggml-base.so").toRealPath();
        ProcessBuilder bench = new ProcessBuilder("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
                "--clear-groups", "--", copy.resolve("llama-bench").toString(), "-m", copy.resolve("tiny.gguf").toString(),
                "-p", "0", "-n", "0", "-pg", "32,32", "-r", "100000", "-t", "2")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        // The build's RUNPATH points into root's home, which nobody cannot enter: the copy's own directory first.
        bench.environment().put("LD_LIBRARY_PATH", copy.toString());
        target = bench.start();
        LlamaBenchIT.awaitMapped(target.pid(), 30, libggmlBase.getFileName().toString());
        return libggmlBase;
    }

    /** Until an interval shows CPU graphs read by the operator layer, or the operator layer unavailable. */
    private static void awaitOperatorGraphs(InfertopProcess infertop, long timeoutSeconds) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline && infertop.process.isAlive()) {
            for (JsonNode interval : infertop.jsonLines()) {
                if (interval.path("op_graphs").asLong() > 0
                        || "unavailable".equals(interval.path("layers").path("operator").path("state").asText())) {
                    return;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no operator graphs within " + timeoutSeconds + " s; stderr:\n"
                + infertop.stderrText());
    }

    /** The build's tools and libraries, symlinks kept, readable by all. */
    private static void copyBuild(Path bin, Path into) throws IOException {
        try (Stream<Path> files = Files.list(bin)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                if (!name.contains(".so") && !name.equals("llama-bench")) {
                    continue;
                }
                Path to = into.resolve(name);
                Files.copy(file, to, LinkOption.NOFOLLOW_LINKS, StandardCopyOption.COPY_ATTRIBUTES);
                if (!Files.isSymbolicLink(to)) {
                    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
                }
            }
        }
    }

    private static String run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " hung");
        assertEquals(0, process.exitValue(), String.join(" ", command) + ":\n" + output);
        return output;
    }
}
