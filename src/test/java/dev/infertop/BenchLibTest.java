package dev.infertop;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bench scripts' one library (src/scripts/benchlib.py): its examples hold, it reads llama-bench's figures
 * and writes the decode workload, and every bench script takes the workload from it instead of a copy of its own.
 */
class BenchLibTest {
    private static final Path SCRIPTS = Path.of("src/scripts");

    private static String run(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("python3", SCRIPTS.resolve("benchlib.py").toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "benchlib.py did not end");
        assertEquals(0, process.exitValue(), String.join(" ", command) + ":\n" + out);
        return out;
    }

    @Test
    void itsExamplesHold() throws Exception {
        String out = run("selftest");
        assertTrue(out.matches("(?s)benchlib: ([1-9][0-9]*) of \\1 examples hold\\s*"), out);
    }

    @Test
    void itReadsEachRepetitionsTokensPerSecondFromLlamaBenchsJsonLines() throws Exception {
        Path file = Files.createTempFile("llama-bench", ".jsonl");
        try {
            Files.writeString(file, "build: 1 (abc)\n{\"n_gen\": 64, \"samples_ts\": [70.5, 71.25, 69]}\n");
            assertEquals("70.5,71.25,69\n", run("samples", file.toString()));
        } finally {
            Files.delete(file);
        }
    }

    @Test
    void itWritesTheDecodeWorkload() throws Exception {
        assertEquals(String.join("\n", "llama-bench", "-m", "m.gguf", "-p", "0", "-n", "64", "-t", "2", "-r", "5",
                "-o", "jsonl") + "\n", run("workload", "llama-bench", "m.gguf", "5", "-o", "jsonl"));
    }

    @Test
    void everyBenchScriptTakesTheWorkloadFromTheLibrary() throws IOException {
        List<Path> scripts;
        try (Stream<Path> files = Files.list(SCRIPTS)) {
            scripts = files.filter(p -> p.getFileName().toString().matches("bench-.*\\.sh"))
                    .filter(p -> !p.getFileName().toString().equals("bench-workload.sh")).sorted().toList();
        }
        assertTrue(scripts.size() >= 4, "bench scripts: " + scripts);
        for (Path script : scripts) {
            String text = Files.readString(script);
            String code = text.lines().filter(l -> !l.stripLeading().startsWith("#"))
                    .reduce("", (a, b) -> a + b + "\n");
            assertTrue(code.contains("source \"$here/bench-workload.sh\"")
                            && (code.contains("decode_workload ") || code.contains("decode_workload(")),
                    script + " does not take its workload from bench-workload.sh / benchlib.py");
            assertFalse(code.contains("-n 64") || code.contains("\"-n\", \"64\""),
                    script + " spells out the decode workload itself");
        }
    }
}
