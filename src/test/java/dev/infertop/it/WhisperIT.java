package dev.infertop.it;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.process.ElfFile;
import dev.infertop.workload.LlamaCppWorkload;
import dev.infertop.workload.whisper.SyntheticWav;
import dev.infertop.workload.whisper.SyntheticWhisperModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A second GGML runtime where users run it: Debian sid's own whisper.cpp (whisper-cli 1.9.5 on libwhisper1 and
 * the same libggml0 as llama.cpp's root: stripped CPU variants, OpenMP) in a root of its own
 * (src/scripts/provision-distro-whisper.sh), started as a container runtime starts a tool, transcribing the
 * project's synthetic whisper model and WAV ({@link SyntheticWhisperModel}, {@link SyntheticWav}), traced from the
 * host with {@code -p}. Counted independently: tracefs uprobes on the root's own files count the CPU graphs
 * (ggml_graph_compute in the CPU variant whisper.cpp's ggml keeps) and the transcription and mel calls (the
 * exported functions the token layer probes, entered through the PLT); whisper's own whisper_print_timings gives
 * its encoder passes and the decoder's calls by kind, whose tokens summed are the decoder tokens; whisper-cli's
 * "processing" line the samples.
 */
class WhisperIT {
    private static final String LIBWHISPER = "/usr/lib/x86_64-linux-gnu/libwhisper.so.1";
    private static final int AUDIO_SECONDS = 3;

    private static Path root;
    private static Path models;
    private static Path model;
    private static Path wav;
    private static String cpuVariant;
    private final List<Process> containers = new ArrayList<>();

    @BeforeAll
    static void requirements() throws Exception {
        Requirements.canTrace();
        Path dir = LlamaCppWorkload.cacheDir().resolve("whisper.cpp-debian-sid");
        Requirements.require(Files.exists(dir.resolve("root.stamp")),
                "needs Debian sid's whisper.cpp in a root of its own: run src/scripts/provision-distro-whisper.sh"
                        + " (setup.sh does)");
        root = dir.resolve("root");
        models = LlamaCppWorkload.cacheDir().resolve("models");
        model = SyntheticWhisperModel.TINY.writeToCache(models);
        wav = SyntheticWav.writeToCache(models, AUDIO_SECONDS);
        cpuVariant = cpuVariant();
    }

    @AfterEach
    void stopContainers() throws Exception {
        for (Process container : containers) {
            Containers.stop(container);
        }
        LeakCheck.assertNothingLeft();
    }

    private static String versions() {
        try {
            return String.join(", ", Files.readAllLines(root.getParent().resolve("versions.txt")));
        } catch (IOException e) {
            return "(versions unknown: " + e.getMessage() + ")";
        }
    }

    /** whisper-cli in its container, its output (its timings) into {@code log}. */
    private Process whisperCli(Path log, String... command) throws IOException {
        List<String> argv = new ArrayList<>(List.of("bash", Containers.RUNNER.toString(), "--models",
                models.toString(), root.toString(), "--", "/usr/bin/whisper-cli"));
        argv.addAll(List.of(command));
        Process container = new ProcessBuilder(argv).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
        containers.add(container);
        return container;
    }

    /** The CPU variant ggml keeps on this machine, from the start-up line of an untraced run (a fraction of a second). */
    private static String cpuVariant() throws Exception {
        List<String> argv = List.of("bash", Containers.RUNNER.toString(), "--models", models.toString(),
                root.toString(), "--", "/usr/bin/whisper-cli", "-m", "/models/" + model.getFileName(), "-f",
                "/models/" + wav.getFileName(), "-t", "2");
        Process run = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String output = new String(run.getInputStream().readAllBytes());
        run.waitFor(60, TimeUnit.SECONDS);
        Matcher loaded = Pattern.compile("loaded CPU backend from \\S*/(libggml-cpu-[^/\\s]+\\.so)").matcher(output);
        if (!loaded.find()) {
            throw new AssertionError("whisper-cli in the container named no CPU backend:\n" + output);
        }
        return loaded.group(1);
    }

    /**
     * The pid of the container's whisper-cli once its CPU variant's code is mapped and it has its model file open:
     * ggml has scored every variant and kept the best by then, and no graph has run (they come after the model,
     * the state and the audio). Polled without sleeping, as Containers.awaitTool does.
     */
    private static long awaitModelLoad(Process container) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String modelName = model.getFileName().toString();
        while (System.nanoTime() < deadline) {
            Optional<ProcessHandle> tool = container.toHandle().descendants()
                    .filter(p -> "whisper-cli".equals(Containers.comm(p.pid()))).findFirst();
            if (tool.isPresent()) {
                long pid = tool.get().pid();
                try {
                    boolean variant = Files.readAllLines(Path.of("/proc/" + pid + "/maps")).stream()
                            .anyMatch(l -> l.contains("/" + cpuVariant) && l.split("\\s+")[1].contains("x"));
                    if (variant && opens(pid, modelName)) {
                        return pid;
                    }
                } catch (IOException e) {
                    // not readable yet
                }
            }
            if (!container.isAlive()) {
                throw new AssertionError("the container exited (" + container.exitValue() + ") before whisper-cli"
                        + " loaded its model");
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("whisper-cli did not load its model within 60 s");
    }

    private static boolean opens(long pid, String name) {
        try (var fds = Files.newDirectoryStream(Path.of("/proc/" + pid + "/fd"))) {
            for (Path fd : fds) {
                try {
                    if (Files.readSymbolicLink(fd).toString().endsWith("/" + name)) {
                        return true;
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        } catch (IOException e) {
            return false;
        }
        return false;
    }

    /** whisper_print_timings' "NAME time = T ms / N runs": N, or 0 where whisper printed max(1, 0) with no time. */
    static long runs(String output, String name) {
        Matcher m = Pattern.compile(name + " time =\\s*([0-9.]+) ms /\\s*(\\d+) runs").matcher(output);
        assertTrue(m.find(), "whisper_print_timings has no " + name + " line:\n" + output);
        return Double.parseDouble(m.group(1)) == 0 ? 0 : Long.parseLong(m.group(2));
    }

    /** whisper_print_timings' "NAME time = T ms": T. */
    static double millis(String output, String name) {
        Matcher m = Pattern.compile(name + " time =\\s*([0-9.]+) ms").matcher(output);
        assertTrue(m.find(), "whisper_print_timings has no " + name + " time:\n" + output);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void whisperCliInAContainerIsCountedInItsOwnUnits() throws Exception {
        Tracefs.require();
        Path libwhisper = Containers.hostFile(root, LIBWHISPER);
        Path variant = Containers.hostFile(root, "/usr/lib/x86_64-linux-gnu/ggml/backends0/" + cpuVariant);
        Path log = Files.createTempFile("infertop-whisper-it", ".log");
        JsonNode total = null;
        Map<String, Long> counted = null;
        String output = "";
        try (Tracefs oracle = Tracefs.group("infertop_whisper_it");
             ElfFile whisper = ElfFile.open(libwhisper); ElfFile ggml = ElfFile.open(variant)) {
            oracle.addProbe("graph", variant, ggml.fileOffsetOf(ggml.function("ggml_graph_compute").orElseThrow().vaddr()));
            oracle.addProbe("full", libwhisper,
                    whisper.fileOffsetOf(whisper.function("whisper_full_with_state").orElseThrow().vaddr()));
            oracle.addProbe("mel", libwhisper,
                    whisper.fileOffsetOf(whisper.function("whisper_pcm_to_mel_with_state").orElseThrow().vaddr()));
            oracle.enable();
            for (int attempt = 1; ; attempt++) {
                Map<String, Long> base = oracle.hits();
                Process container = whisperCli(log, "-m", "/models/" + model.getFileName(), "-f",
                        "/models/" + wav.getFileName(), "-t", "2");
                long pid = awaitModelLoad(container);
                Containers.signal(pid, Containers.SIGSTOP);
                boolean late = Tracefs.hitsOf(oracle.hits(), "graph") > Tracefs.hitsOf(base, "graph");
                try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "--budget", "0", "-p",
                        Long.toString(pid))) {
                    infertop.awaitStderr("probes attached", 120);
                    Containers.signal(pid, Containers.SIGCONT);
                    assertTrue(container.waitFor(300, TimeUnit.SECONDS), "whisper-cli finished in its container");
                    output = Files.readString(log);
                    assertEquals(0, container.exitValue(), "whisper-cli's exit status:\n" + output);
                    assertEquals(0, infertop.waitFor(60), infertop.stderrText());
                    total = infertop.finalObject();
                    ((com.fasterxml.jackson.databind.node.ObjectNode) total).put("infertop_stderr",
                            infertop.stderrText());
                }
                Map<String, Long> hits = oracle.hits();
                counted = Map.of("graph", Tracefs.hitsOf(hits, "graph") - Tracefs.hitsOf(base, "graph"),
                        "full", Tracefs.hitsOf(hits, "full") - Tracefs.hitsOf(base, "full"),
                        "mel", Tracefs.hitsOf(hits, "mel") - Tracefs.hitsOf(base, "mel"));
                if (!late || attempt == 3) {
                    break;
                }
                System.out.println("whisper: whisper-cli computed a graph before it was stopped (attempt " + attempt
                        + "): again");
            }
            oracle.disable();
        } finally {
            Files.deleteIfExists(log);
        }
        String context = total + "\n(" + versions() + ")\nwhisper-cli:\n" + output;
        JsonNode w = total.path("whisper");
        long encodes = runs(output, "encode");
        long decoderTokens = runs(output, "decode") + runs(output, "batchd") + runs(output, "prompt");
        Matcher processing = Pattern.compile("\\((\\d+) samples, ([0-9.]+) sec\\)").matcher(output);
        assertTrue(processing.find(), "whisper-cli's processing line: " + output);
        long samples = Long.parseLong(processing.group(1));
        System.out.printf("whisper: whisper-cli in a container (%s): graphs %d (tracefs %d), op graphs %d (%d "
                        + "unattributed), encoder passes %d (whisper %d), decoder tokens %d in %d calls (whisper %d), "
                        + "transcriptions %d (tracefs %d, mel %d), audio %.3f s (whisper %d samples), real time %s%n",
                versions(), total.path("cpu_graph_computes").asLong(), counted.get("graph"),
                total.path("op_graphs").asLong(), total.path("op_graphs_unattributed").asLong(),
                w.path("encoder_passes").asLong(), encodes, w.path("decoder_tokens").asLong(),
                w.path("decoder_calls").asLong(), decoderTokens, w.path("transcriptions").asLong(),
                counted.get("full"), counted.get("mel"), w.path("audio_s").asDouble(), samples,
                w.path("real_time_factor"));
        // Graph and operator layers: every CPU graph, each attributed.
        assertEquals(counted.get("graph"), total.path("cpu_graph_computes").asLong(),
                "tracefs's ggml_graph_compute count: " + context);
        assertEquals(total.path("cpu_graph_computes").asLong(), total.path("op_graphs").asLong(),
                "every graph traced by the operator layer (--budget 0): " + context);
        assertEquals(0, total.path("op_graphs_unattributed").asLong(), context);
        assertEquals(0, total.path("lost_events").asLong(), context);
        // whisper's own units, as whisper counts them.
        assertEquals(encodes, w.path("encoder_passes").asLong(), "whisper's encode runs: " + context);
        assertEquals(decoderTokens, w.path("decoder_tokens").asLong(),
                "whisper's decode + batchd + prompt runs (tokens): " + context);
        assertEquals(total.path("cpu_graph_computes").asLong(), 3 * encodes + w.path("decoder_calls").asLong(),
                "an encoder pass is three graphs (conv, encoder, cross), the rest decoder calls: " + context);
        assertEquals(1, counted.get("full"), "tracefs: whisper_full_with_state entered through the PLT once");
        assertEquals(1, counted.get("mel"), "tracefs: whisper_pcm_to_mel_with_state entered through the PLT once");
        assertEquals(counted.get("full"), w.path("transcriptions").asLong(), context);
        assertEquals(0, w.path("failed_transcriptions").asLong(), context);
        assertEquals(SyntheticWav.sampleCount(AUDIO_SECONDS), samples, "the WAV's samples as whisper-cli read them");
        assertEquals(samples / 16_000.0, w.path("audio_s").asDouble(), 1e-9, context);
        // The real-time factor's time is whisper_full_with_state's: it holds whisper's own timed stages (the graphs'
        // encode, decode, batchd and prompt times, which do not overlap), and lies within what whisper timed after
        // its model load (its total less its load time; the stop for the attach falls in there too).
        double transcribingMs = 1e3 * w.path("audio_s").asDouble() / w.path("real_time_factor").asDouble();
        double stagesMs = millis(output, "encode") + millis(output, "decode") + millis(output, "batchd")
                + millis(output, "prompt");
        double afterLoadMs = millis(output, "total") - millis(output, "load");
        System.out.printf("whisper: transcription %.2f ms by infertop; whisper's stages %.2f ms, after its load %.2f ms"
                + "%n", transcribingMs, stagesMs, afterLoadMs);
        assertTrue(transcribingMs >= stagesMs - 0.05 && transcribingMs <= afterLoadMs + 0.05,
                "the real-time factor's transcription time " + transcribingMs + " ms between whisper's stages "
                        + stagesMs + " ms and its time after the load " + afterLoadMs + " ms: " + context);
        // What applies: whisper's units, never llama.cpp's rates or its reason.
        JsonNode token = total.path("layers").path("token");
        assertEquals("on", token.path("state").asText(), context);
        assertTrue(token.path("probes").toString().contains("whisper_full_with_state (entry and return)"), context);
        assertTrue(total.path("decode_tokens_per_s").isNull(), "no llama.cpp rate: " + context);
        assertTrue(total.path("prefill_tokens_per_s").isNull(), "no llama.cpp rate: " + context);
        assertEquals("whisper.cpp", total.path("token_source").asText(), "whisper's units are the tokens' source: " + context);
        assertFalse(total.toString().contains("a llama.cpp library"), context);
        assertFalse(total.path("infertop_stderr").asText().contains("llama_batch"),
                "no notice about llama.cpp's batches, which a whisper.cpp program has none of: " + context);
    }
}
