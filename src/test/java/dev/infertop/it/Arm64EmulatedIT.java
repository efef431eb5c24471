package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.workload.SyntheticModel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * infertop on arm64, end to end, under emulation: src/scripts/arm64-stage.sh boots a Debian 13 arm64 guest with
 * QEMU's TCG (no KVM), which installs infertop from the release tarball as a board would (its JRE 25 and libbpf1
 * only) and traces a cross-compiled llama-bench on a Q8_0 synthetic model. Counts only: TCG timing swings 2x with
 * the host's load.
 *
 * <p>A JUnit IT rather than a separate CI stage: it runs in the same {@code mvn verify} as the x86-64 oracles
 * (LlamaBenchIT), on the jar that run just packaged, and fails in CI like every other IT when it cannot run.
 *
 * <p>{@code llama-bench -p 16 -n 8 -r 1}: pp16 = 1 warm-up + 1 call of 16 tokens; tg8 = 1 warm-up call of 1
 * token + 8 calls of 1 token: 2 prompt calls, 9 decode steps, one CPU graph each.
 */
class Arm64EmulatedIT {
    /** The guest's run (arm64-stage.sh's BENCH_ARGS): -p 16 -n 8 -r 1. */
    private static final LlamaBenchRun BENCH = new LlamaBenchRun(16, 8, 1);
    /** The MoE run (MOE_BENCH_ARGS): -p 8 -n 4 -r 1. */
    private static final LlamaBenchRun MOE_BENCH = new LlamaBenchRun(8, 4, 1);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path share;

    @BeforeAll
    static void bootGuest() throws Exception {
        Requirements.requireRoot();
        for (String tool : new String[] {"/usr/bin/qemu-system-aarch64", "/usr/bin/aarch64-linux-gnu-g++",
                "/usr/bin/mmdebstrap", "/usr/bin/cpio", "/sbin/depmod"}) {
            Requirements.require(Files.isExecutable(Path.of(tool)), "needs " + tool + " (src/scripts/setup.sh installs it)");
        }
        share = Path.of("target/arm64-stage").toAbsolutePath();
        Path log = Path.of("target/arm64-stage.log");
        Process stage = new ProcessBuilder("bash", "src/scripts/arm64-stage.sh", "--timeout", "1500", share.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!stage.waitFor(45, TimeUnit.MINUTES)) {
            stage.destroyForcibly();
            throw new AssertionError("the arm64 stage did not end in 45 minutes:\n" + Files.readString(log));
        }
        String text = Files.readString(log);
        System.out.print(text);
        assertEquals(0, stage.exitValue(), "arm64-stage.sh:\n" + text + guestLog());
    }

    private static String guestLog() throws Exception {
        StringBuilder s = new StringBuilder();
        for (String name : new String[] {"guest.log", "infertop.stderr", "moe.stderr"}) {
            Path file = share.resolve(name);
            s.append("\n--- ").append(name).append(":\n").append(Files.exists(file) ? Files.readString(file) : "(none)");
        }
        return s.toString();
    }

    private static JsonNode finalObject() throws Exception {
        return finalObject("infertop.json");
    }

    private static JsonNode finalObject(String file) throws Exception {
        List<String> lines = Files.readAllLines(share.resolve(file));
        assertFalse(lines.isEmpty(), "no JSON from infertop in the guest" + guestLog());
        JsonNode last = JSON.readTree(lines.getLast());
        assertTrue(last.path("final").asBoolean(), "no final JSON object" + guestLog());
        return last;
    }

    @Test
    void tarballInstallsOnTheBoard() throws Exception {
        assertEquals("0", Files.readString(share.resolve("version.rc")).strip(), Files.readString(share.resolve("version.txt")));
        assertTrue(Files.readString(share.resolve("version.txt")).matches("(?s)infertop \\d+\\.\\d+.*"),
                Files.readString(share.resolve("version.txt")));
    }

    @Test
    void tokenGraphAndOperatorCountsEqualLlamaBench() throws Exception {
        assertEquals("0", Files.readString(share.resolve("infertop.rc")).strip(), guestLog());
        // llama-bench's own record of what it ran (-o jsonl, on infertop's stderr with --json): the oracle's inputs.
        List<JsonNode> records = new ArrayList<>();
        for (String line : Files.readAllLines(share.resolve("infertop.stderr"))) {
            if (line.startsWith("{")) {
                records.add(JSON.readTree(line));
            }
        }
        assertEquals(2, records.size(), "pp and tg records from llama-bench");
        assertEquals(BENCH.promptTokens(), records.get(0).path("n_prompt").asInt());
        assertEquals(BENCH.generatedTokens(), records.get(1).path("n_gen").asInt());
        JsonNode total = finalObject();
        System.out.printf("arm64 guest: llama_decode %d (prompt %d, decode steps %d), tokens %d + %d, CPU graphs %d,"
                        + " op graphs %d (%d unattributed), lost %d%n", total.get("decode_calls").asLong(),
                total.get("prefill_calls").asLong(), total.get("decode_step_calls").asLong(),
                total.get("tokens_prefill").asLong(), total.get("tokens_decode").asLong(),
                total.get("cpu_graph_computes").asLong(), total.get("op_graphs").asLong(),
                total.get("op_graphs_unattributed").asLong(), total.get("lost_events").asLong());
        total.get("layers").fields().forEachRemaining(e -> System.out.println("arm64 guest layer " + e.getKey() + ": "
                + e.getValue().toString()));
        assertEquals("exited", total.get("target_state").asText());
        BENCH.assertTokenCounts(total);
        assertEquals(BENCH.calls(), total.get("cpu_graph_computes").asLong(), "one CPU graph per call");
        assertEquals(0, total.get("lost_events").asLong());
        for (String layer : new String[] {"token", "graph", "operator"}) {
            JsonNode status = total.get("layers").get(layer);
            assertEquals("on", status.get("state").asText(), layer + ": " + status);
            assertFalse(status.get("probes").isEmpty(), layer + " lists its probe sites: " + status);
        }
        assertEquals(BENCH.calls(), total.get("op_graphs").asLong(), "every graph walked by the operator layer");
        assertEquals(0, total.get("op_graphs_unattributed").asLong());
        // arm64 probe sites: each names the instruction it sits on and whether the kernel simulates or steps it.
        String tokenProbe = total.get("layers").get("token").get("probes").get(0).asText();
        assertTrue(tokenProbe.contains("libllama.so"), tokenProbe);
        assertTrue(total.get("layers").get("operator").get("probes").toString().contains("libggml-cpu.so"),
                total.get("layers").get("operator").toString());
        // The node loop's barrier calls on arm64 (GCC duplicates the after-loop one) are read from the code's shape.
        String operatorProbes = total.get("layers").get("operator").get("probes").toString();
        assertTrue(operatorProbes.contains("by the node loop's shape"), operatorProbes);
        assertTrue(tokenProbe.contains("by the arm64 uprobe code") && !tokenProbe.contains("not classified"),
                "the entry probe names its instruction: " + tokenProbe);
        assertEquals("", Files.readString(share.resolve("uprobe_events.after")).strip(), "no probe left behind");
    }

    /**
     * tiny-moe (8 experts, 2 used per token) quantized to Q8_0, {@code llama-bench -p 8 -n 4 -r 1}: 2 prompt calls
     * of 8 tokens, 5 decode steps. Every token row of every MoE layer is read and selects exactly k experts; the
     * last layer's FFN runs only for the rows whose logits are wanted, one per call.
     */
    @Test
    void moeSelectionsAreTokenRowsTimesExpertsUsed() throws Exception {
        assertEquals("0", Files.readString(share.resolve("moe.rc")).strip(), Files.readString(share.resolve("moe.stderr")));
        JsonNode total = finalObject("moe.json");
        SyntheticModel spec = SyntheticModel.preset("tiny-moe");
        long prefillCalls = MOE_BENCH.prefillCalls();
        long decodeSteps = MOE_BENCH.decodeSteps();
        long promptTokens = MOE_BENCH.promptTokens();
        assertEquals(prefillCalls + decodeSteps, total.get("decode_calls").asLong(), total.toString());
        JsonNode moe = total.get("moe");
        assertEquals(spec.expertsUsedPerToken(), moe.get("experts_used").asInt(), moe.toString());
        assertEquals(spec.expertCount(), moe.get("experts").asInt());
        int lastLayer = spec.layerCount() - 1;
        for (int layer = 0; layer < spec.layerCount(); layer++) {
            JsonNode l = moe.get("layers").get(Integer.toString(layer));
            long rows = l.get("tokens_prefill").asLong() + l.get("tokens_decode").asLong();
            long ran = layer == lastLayer ? prefillCalls + decodeSteps : prefillCalls * promptTokens + decodeSteps;
            assertEquals(ran, rows, "token rows read, layer " + layer + ": " + l);
            assertEquals(0, l.get("tokens_unread").asLong(), "layer " + layer + ": " + l);
            long selections = 0;
            for (int e = 0; e < spec.expertCount(); e++) {
                selections += l.get("decode").get(e).asLong() + l.get("prefill").get(e).asLong();
            }
            System.out.printf("arm64 guest MoE layer %d: %d token rows, %d selections (k = %d)%n", layer, rows,
                    selections, spec.expertsUsedPerToken());
            assertEquals(rows * spec.expertsUsedPerToken(), selections, "k selections per row, layer " + layer);
        }
    }

    /**
     * The counters layer on QEMU's emulated PMU (armv8_pmuv3, in the MoE run): cycles count; what it lacks is said
     * in one line each — an event the kernel refuses (instructions, without -icount) in the layer's status, an
     * event it accepts and never counts (the cache refills r2A, MEM_ACCESS r13) as silent — and never shown as a
     * measured 0 B/s.
     */
    @Test
    void countersOnTheEmulatedPmuCountCyclesAndNameWhatTheyLack() throws Exception {
        assertTrue(Files.readString(share.resolve("pmu.txt")).contains("armv8_pmuv3"), "the guest's PMU");
        JsonNode counters = finalObject("moe.json").get("counters");
        System.out.println("arm64 guest counters: " + counters.path("state").asText() + "; status: "
                + counters.path("status").asText("(none)") + "; silent: " + counters.path("silent_notice").asText("(none)")
                + "; values " + counters.get("values"));
        assertTrue(counters.get("groups").asLong() > 0, counters.toString());
        assertTrue(counters.get("values").get("cycles").asLong() > 0, "cycles count: " + counters);
        assertFalse(counters.path("status").asText().startsWith("no hardware PMU"), "there is a PMU: " + counters);
        List<String> silent = new ArrayList<>();
        counters.path("silent_events").forEach(e -> silent.add(e.asText()));
        counters.get("values").fields().forEachRemaining(e -> assertTrue(e.getValue().asLong() > 0
                || silent.contains(e.getKey()), e.getKey() + " counted 0 and is not named silent: " + counters));
    }

    @Test
    void liveViewDrawsInTheGuestsTerminalAndQuitsWithQ() throws Exception {
        // The guest's test typed q once llama-bench had exited: the view was up, kept its last screen, and quit.
        // A JVM that died under the emulator was run once more (arm64-guest-test.sh): its report is printed here.
        for (int attempt = 1; attempt <= 2; attempt++) {
            Path crash = share.resolve("jvm-crash-" + attempt + ".log");
            if (Files.exists(crash)) {
                System.out.println("arm64 guest: the JVM crashed in live-view attempt " + attempt + ":\n"
                        + String.join("\n", Files.readAllLines(crash).stream().limit(60).toList()));
            }
        }
        assertEquals("0", Files.readString(share.resolve("live.rc")).strip(), "infertop's exit status after q");
        // The view's last screen, as a terminal shows it: what `script` recorded from the guest's pty, replayed
        // into a tmux pane of the same size up to where the view left the alternate screen (after q).
        byte[] recorded = Files.readAllBytes(share.resolve("live.typescript"));
        String text = new String(recorded, java.nio.charset.StandardCharsets.ISO_8859_1);
        int from = text.indexOf('\n') + 1; // after script's "Script started ..." line
        int to = text.lastIndexOf("\u001b[?1049l");
        assertTrue(from > 0 && to > from, "the view entered and left the alternate screen: " + text);
        double firstScreenS = firstScreenSeconds(text.substring(from), Files.readAllLines(share.resolve("live.timing")));
        System.out.printf(java.util.Locale.ROOT, "arm64 guest: the live view's first screen of figures %.1f s after "
                + "infertop started (the command launched and held; under emulation)%n", firstScreenS);
        assertTrue(firstScreenS > 0, "the timing file places the first screen");
        Path frames = share.resolve("live.frames");
        Files.write(frames, java.util.Arrays.copyOfRange(recorded, from, to));
        try (TmuxPane pane = TmuxPane.startShell("infertop-arm64-live", 110, 30, share, "cat live.frames && sleep 600")) {
            String screen = pane.awaitScreen("TARGET EXITED", s -> s.contains("TARGET EXITED"), 20);
            System.out.println("arm64 guest live view, last screen:\n" + screen);
            // Drawn from the run, not only the first screen: a decode rate and the operators of the last interval.
            java.util.regex.Matcher decode = java.util.regex.Pattern.compile("(?m)^decode\\s+([0-9.]+) tok/s").matcher(screen);
            assertTrue(decode.find() && Double.parseDouble(decode.group(1)) > 0, "a decode rate drawn:\n" + screen);
            assertTrue(screen.contains("MUL_MAT"), "the op table drew the run's operators:\n" + screen);
        }
    }

    /**
     * Seconds from the start of {@code output} (what the pty got, after script's own first line) to the first
     * screen with figures: the first "tok/s" drawn after the view entered the alternate screen. {@code timing}
     * is script's classic timing log: per write, the delay before it and its byte count.
     */
    static double firstScreenSeconds(String output, List<String> timing) {
        int screen = output.indexOf("\u001b[?1049h");
        int figures = screen < 0 ? -1 : output.indexOf("tok/s", screen);
        if (figures < 0) {
            return -1;
        }
        double seconds = 0;
        long bytes = 0;
        for (String line : timing) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length != 2) {
                continue;
            }
            seconds += Double.parseDouble(parts[0]);
            bytes += Long.parseLong(parts[1]);
            if (bytes > figures) {
                return seconds;
            }
        }
        return -1;
    }
}
