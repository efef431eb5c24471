package dev.infertop.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.workload.gguf.ProgressListener;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The real check: llama.cpp's own benchmark loads the generated models and computes finite throughput. */
class SyntheticModelLlamaCppTest {

    private static final long TIMEOUT_S = 180;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"tiny", "tiny-moe"})
    void llamaBenchRunsPromptAndGenerationOnTheModel(String preset) throws Exception {
        Path llamaBench = LlamaCppBinaries.require("llama-bench");
        SyntheticModel model = SyntheticModel.preset(preset);
        Path gguf = model.writeTo(dir.resolve(preset + ".gguf"), ProgressListener.NONE);

        JsonNode results = new ObjectMapper().readTree(run(List.of(llamaBench.toString(), "-m", gguf.toString(),
                "-p", "16", "-n", "8", "-r", "1", "-t", "2", "-o", "json")));

        assertEquals(2, results.size(), "one prompt and one generation result: " + results);
        for (JsonNode result : results) {
            String test = result.get("n_prompt").asInt() > 0 ? "pp" + result.get("n_prompt").asInt() : "tg" + result.get("n_gen").asInt();
            double tokensPerSecond = result.get("avg_ts").asDouble();
            assertTrue(Double.isFinite(tokensPerSecond) && tokensPerSecond > 0, preset + " " + test + " t/s = " + tokensPerSecond);
            assertEquals(model.parameterCount(), result.get("model_n_params").asLong(), "llama.cpp counts the same parameters");
        }
    }

    private String run(List<String> command) throws IOException, InterruptedException {
        Path stdout = dir.resolve("stdout.txt");
        Path stderr = dir.resolve("stderr.txt");
        Process process = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        if (!process.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail(String.join(" ", command) + " did not finish in " + TIMEOUT_S + " s");
        }
        if (process.exitValue() != 0) {
            fail(String.join(" ", command) + " exited " + process.exitValue() + ":\n" + tail(Files.readString(stderr)));
        }
        return Files.readString(stdout);
    }

    private static String tail(String text) {
        return text.length() <= 4000 ? text : text.substring(text.length() - 4000);
    }
}
