package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.process.ElfFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code infertop -- LAUNCHER ...}, where LAUNCHER has no GGML code of its own and starts the engine as users
 * start one: a wrapper script that runs a few other programs and then Debian sid's llama-bench in a container
 * (src/scripts/container-run.sh: own mount and PID namespaces, an overlay root), or {@code unshare} running
 * {@code sh -c} that chroots into the root. infertop follows the tree to llama-bench and traces it from before
 * its first graph: every count equals what tracefs uprobes on the root's own libraries counted, and llama-bench's
 * own run count ({@code -p 64 -n 32 -r 3}: 4 + 97 calls, one graph each, as in {@link DistroContainerIT}).
 */
class LaunchedTreeIT {
    private static final long CALLS = 4 + 97;
    private static final String LIBDIR = "/usr/lib/x86_64-linux-gnu";

    private static Path root;
    private static Path models;
    private static String cpuVariant;
    private Path directory;

    @BeforeAll
    static void requirements() throws Exception {
        Requirements.canTrace();
        root = Containers.debianRoot();
        models = Models.preset("tiny").getParent();
        cpuVariant = Containers.cpuVariant(root, models);
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (directory != null) {
            try (var files = Files.list(directory)) {
                for (Path file : files.toList()) {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(directory);
        }
        LeakCheck.assertNothingLeft();
    }

    private static List<String> bench(String modelDirectory) {
        return List.of("/usr/bin/llama-bench", "-m", modelDirectory + "/" + Models.preset("tiny").getFileName(),
                "-p", "64", "-n", "32", "-r", "3", "-t", "2");
    }

    /**
     * infertop --json -- COMMAND, its final object, with what tracefs uprobes on the root's files counted meanwhile
     * in the process infertop traced: each hit is recorded (with its thread group id) in a tracing instance of
     * this test's own, so that another program of the same root running meanwhile is not counted.
     */
    private static JsonNode traceCounted(Map<String, Long> counted, String... command) throws Exception {
        Tracefs.require();
        Path libllama = Containers.hostFile(root, LIBDIR + "/libllama.so.0");
        Path base = Containers.hostFile(root, LIBDIR + "/libggml-base.so.0");
        Path variant = Containers.hostFile(root, LIBDIR + "/ggml/backends0/" + cpuVariant);
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "--"));
        args.addAll(List.of(command));
        JsonNode total;
        String group = "infertop_tree_it";
        Path instance = Tracefs.TRACING.resolve("instances").resolve(group);
        try (Tracefs oracle = Tracefs.group(group); ElfFile llama = ElfFile.open(libllama);
             ElfFile ggmlBase = ElfFile.open(base); ElfFile cpu = ElfFile.open(variant)) {
            oracle.addProbe("process", libllama, llama.fileOffsetOf(llama.function("llama_process").orElseThrow().vaddr()));
            oracle.addProbe("backend", base, ggmlBase.fileOffsetOf(
                    ggmlBase.function("ggml_backend_graph_compute_async").orElseThrow().vaddr()));
            oracle.addProbe("cpu", variant, cpu.fileOffsetOf(cpu.function("ggml_graph_compute").orElseThrow().vaddr()));
            if (Files.isDirectory(instance)) {
                Files.delete(instance); // a crashed earlier run's
            }
            Files.createDirectory(instance);
            String trace;
            try {
                Files.writeString(instance.resolve("options/record-tgid"), "1");
                Files.writeString(instance.resolve("buffer_size_kb"), "4096");
                Files.writeString(instance.resolve("events").resolve(group).resolve("enable"), "1");
                try (InfertopProcess infertop = InfertopProcess.start(args.toArray(String[]::new))) {
                    assertEquals(0, infertop.waitFor(300), infertop.stderrText());
                    total = infertop.finalObject();
                    ((com.fasterxml.jackson.databind.node.ObjectNode) total).put("infertop_stderr",
                            infertop.stderrText());
                }
                Files.writeString(instance.resolve("events").resolve(group).resolve("enable"), "0");
                trace = Files.readString(instance.resolve("trace"));
            } finally {
                try {
                    Files.writeString(instance.resolve("events").resolve(group).resolve("enable"), "0");
                } finally {
                    Files.delete(instance);
                }
            }
            long tgid = total.get("pid").asLong();
            assertTrue(!trace.contains("LOST"), "the tracing instance lost events");
            for (String event : List.of("process", "backend", "cpu")) {
                // "llama-bench-28542 (  28542) [001] ..... 123.456789: cpu: (0x7f...)"
                java.util.regex.Pattern line = java.util.regex.Pattern.compile(
                        "\\(\\s*" + tgid + "\\)\\s+\\[\\d+\\].*:\\s+" + event + ":");
                counted.put(event, trace.lines().filter(l -> line.matcher(l).find()).count());
            }
        }
        System.out.printf("launched tree %s: llama_process %d (tracefs %d), graphs %s (tracefs %d), CPU graphs %d "
                        + "(tracefs %d), op graphs %d%n", List.of(command), total.get("decode_calls").asLong(),
                counted.get("process"), total.get("graph_computes"), counted.get("backend"),
                total.get("cpu_graph_computes").asLong(), counted.get("cpu"), total.get("op_graphs").asLong());
        return total;
    }

    private static void assertCountedAsTracefsCounts(JsonNode total, Map<String, Long> counted) {
        String context = total.toString();
        assertTrue(total.get("infertop_stderr").asText().contains("following pid"), context);
        assertEquals("llama-bench", total.get("command").asText(), "the engine is what is traced: " + context);
        assertEquals("exited", total.get("target_state").asText(), context);
        assertEquals(counted.get("process"), total.get("decode_calls").asLong(), "tracefs llama_process: " + context);
        assertEquals(counted.get("backend"), total.get("graph_computes").get("CPU").asLong(),
                "tracefs ggml_backend_graph_compute_async: " + context);
        assertEquals(counted.get("cpu"), total.get("cpu_graph_computes").asLong(),
                "tracefs ggml_graph_compute of the dlopen'ed CPU variant: " + context);
        assertEquals(CALLS, total.get("decode_calls").asLong(), "llama-bench's own calls: " + context);
        assertEquals(CALLS, total.get("cpu_graph_computes").asLong(), "one CPU graph per call: " + context);
        assertEquals(0, total.get("lost_events").asLong(), context);
        assertEquals("on", total.get("layers").get("operator").get("state").asText(),
                "the node loop of the CPU variant it dlopens, probed before it ran: " + context);
    }

    /** A wrapper script (not an ELF file: once refused) that runs sed and grep, then the container. */
    @Test
    void aWrapperScriptIsFollowedIntoTheContainerAndCountedExactly() throws Exception {
        directory = Files.createTempDirectory("infertop-tree-it-");
        Path script = directory.resolve("run-in-container.sh");
        Files.writeString(script, "#!/bin/sh\n"
                + "echo preparing | sed s/preparing/ready/ | grep -q ready\n"
                + "exec bash " + Containers.RUNNER.toAbsolutePath() + " --models " + models + " " + root + " -- "
                + String.join(" ", bench("/models")) + "\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, Long> counted = new java.util.HashMap<>();
        JsonNode total = traceCounted(counted, script.toString());
        assertCountedAsTracefsCounts(total, counted);
    }

    /** unshare (a new mount namespace) runs sh -c, which binds the models in and execs chroot ROOT llama-bench. */
    @Test
    void unshareShAndChrootAreFollowedAndCountedExactly() throws Exception {
        String inside = "mount --bind " + models + " " + root + "/models && exec chroot " + root + " "
                + String.join(" ", bench("/models"));
        Map<String, Long> counted = new java.util.HashMap<>();
        JsonNode total = traceCounted(counted, "unshare", "--mount", "--propagation", "private", "sh", "-c", inside);
        assertCountedAsTracefsCounts(total, counted);
    }

    /**
     * The same chain, where a library preloaded into llama-bench sleeps in its constructor: the loader has mapped
     * libllama, the program's entry point is a second away. The process was watched for late code under its
     * launcher images (the same pid: unshare, sh and chroot each exec in place); that watch must not take
     * the loader's maps for code loaded while it ran: the hold at its entry point stops it, so no graph is missed.
     */
    @Test
    void anEngineWhoseLoaderTakesAWhileIsHeldAtItsEntryPoint() throws Exception {
        directory = Files.createTempDirectory("infertop-tree-it-");
        Path marker = dev.infertop.process.layout.ConstructorLibrary.newMarker(directory);
        Path slow = dev.infertop.process.layout.ConstructorLibrary.build(directory.resolve("slow.so"),
                Path.of("/tmp/marker.txt"), 1, null); // the marker as the chroot sees it: DIRECTORY on its /tmp
        String inside = "mount --bind " + models + " " + root + "/models && mount --bind " + directory + " " + root
                + "/tmp && LD_PRELOAD=/tmp/" + slow.getFileName() + " exec chroot " + root + " "
                + String.join(" ", bench("/models")); // the root has no env: chroot's own loader skips the file
        Map<String, Long> counted = new java.util.HashMap<>();
        JsonNode total = traceCounted(counted, "unshare", "--mount", "--propagation", "private", "sh", "-c", inside);
        // The root mounts no /proc (its exe reads "?"): the pid says the constructor ran in the traced process.
        assertTrue(Files.readString(marker).contains("pid=" + total.get("pid").asLong() + " "),
                "the slow constructor ran in llama-bench: " + Files.readString(marker));
        assertTrue(total.get("infertop_stderr").asText().contains("held at its entry point"), total.toString());
        assertCountedAsTracefsCounts(total, counted);
    }

    /** A command whose tree never runs GGML code: one line that says so and what it ran, exit status 1. */
    @Test
    void aTreeWithoutAnEngineIsOneLine() throws Exception {
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "--", "sh", "-c",
                "echo one | sed s/one/two/ | grep -q two")) {
            int status = infertop.waitFor(120);
            String stderr = infertop.stderrText();
            List<String> lines = stderr.lines().filter(l -> l.contains("started no process with GGML code")).toList();
            assertEquals(1, status, stderr);
            assertEquals(1, lines.size(), stderr);
            assertTrue(lines.getFirst().matches("infertop: the command ran [0-9.]+ s and started no process with GGML "
                    + "code \\(.*\\): it ran (sh|sed|grep), (sh|sed|grep), (sh|sed|grep) \\(exit status 0; .*\\)"),
                    stderr);
            assertTrue(stderr.lines().noneMatch(l -> l.contains("Exception") || l.startsWith("\tat ")), stderr);
            assertTrue(infertop.jsonLines().isEmpty(), "no JSON for a run that traced nothing");
        }
    }
}
