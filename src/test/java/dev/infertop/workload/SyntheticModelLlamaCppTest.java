package dev.infertop.workload;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.workload.gguf.ProgressListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
                "-p", "16", "-n", "8", "-r", "1", "-t", "2", "-o", "json")).stdout());

        assertEquals(2, results.size(), "one prompt and one generation result: " + results);
        for (JsonNode result : results) {
            String test = result.get("n_prompt").asInt() > 0 ? "pp" + result.get("n_prompt").asInt() : "tg" + result.get("n_gen").asInt();
            double tokensPerSecond = result.get("avg_ts").asDouble();
            assertTrue(Double.isFinite(tokensPerSecond) && tokensPerSecond > 0, preset + " " + test + " t/s = " + tokensPerSecond);
            assertEquals(model.parameterCount(), result.get("model_n_params").asLong(), "llama.cpp counts the same parameters");
        }
    }

    /**
     * Ground truth from inside llama.cpp: llama-eval-callback prints every graph tensor, including each layer's
     * top-k expert ids ({@code ffn_moe_topk-L}, one row per token, experts in descending probability), and the
     * prompt's token ids. A prompt of at most six tokens is printed without elision. The last layer only runs
     * its FFN for the token whose logits are wanted, so its rows belong to the last tokens of the prompt.
     */
    @Test
    void llamaCppRoutesEveryPromptTokenToTheDesignedExpertsInEveryLayer() throws Exception {
        Path evalCallback = LlamaCppBinaries.require("llama-eval-callback");
        SyntheticModel model = SyntheticModel.preset("tiny-moe");
        RouterDesign design = model.routerDesign();
        Path gguf = model.writeTo(dir.resolve("tiny-moe.gguf"), ProgressListener.NONE);

        // llama.cpp logs (the prompt tokens) to stderr and tensors to stdout, through an asynchronous logger it
        // deliberately never drains at exit (common/log.cpp, llama.cpp issue 22142): the end of the dump, the last
        // layer, can be lost. One thread leaves a core to the logger, and a few attempts make it reliable.
        List<Integer> tokens = List.of();
        Map<Integer, List<int[]>> topKByLayer = Map.of();
        for (int attempt = 0; attempt < 3 && topKByLayer.size() < model.layerCount(); attempt++) {
            Output result = run(List.of(evalCallback.toString(), "-m", gguf.toString(), "-p", "hi", "-n", "1", "-t", "1"));
            tokens = promptTokens(result.stderr() + "\n" + result.stdout());
            topKByLayer = topKRows(result.stdout());
        }

        List<Integer> prompt = tokens;
        assertTrue(prompt.size() > 2 && prompt.size() <= 6, "prompt tokens " + prompt);
        assertEquals(model.layerCount(), topKByLayer.size(), "complete ffn_moe_topk printouts, one per layer");
        assertEquals(prompt.size(), topKByLayer.get(0).size(), "layer 0 routes every prompt token");
        topKByLayer.forEach((layer, rows) -> {
            int firstToken = prompt.size() - rows.size();
            for (int row = 0; row < rows.size(); row++) {
                int token = prompt.get(firstToken + row);
                assertArrayEquals(design.expertsForToken(layer, token), rows.get(row),
                        "layer " + layer + " token " + token + ": llama.cpp chose " + Arrays.toString(rows.get(row)));
            }
        });
    }

    private static List<Integer> promptTokens(String output) {
        Matcher count = Pattern.compile("number of input tokens = (\\d+)").matcher(output);
        assertTrue(count.find(), "llama-eval-callback printed no prompt tokens");
        String[] lines = output.substring(count.end()).split("\\R");
        List<Integer> tokens = new ArrayList<>();
        for (int i = 1; tokens.size() < Integer.parseInt(count.group(1)); i++) {
            String[] fields = lines[i].trim().split("\\s+");
            tokens.add(Integer.parseInt(fields[fields.length - 1]));
        }
        return tokens;
    }

    private static Map<Integer, List<int[]>> topKRows(String output) {
        Map<Integer, List<int[]>> byLayer = new LinkedHashMap<>();
        Matcher header = Pattern.compile("ffn_moe_topk-(\\d+) = ").matcher(output);
        Pattern row = Pattern.compile("^\\s*\\[([-\\d.,\\s]+)\\],?$");
        while (header.find()) {
            List<int[]> rows = new ArrayList<>();
            String[] lines = output.substring(header.end()).split("\\R");
            boolean complete = false;
            for (int i = 1; i < lines.length && !complete; i++) {
                complete = lines[i].contains("sum =");
                assertTrue(!lines[i].contains("..."), "tensor printout elided rows: use a shorter prompt");
                Matcher m = row.matcher(lines[i]);
                if (m.matches()) {
                    rows.add(Arrays.stream(m.group(1).split(",")).map(String::trim)
                            .mapToInt(v -> (int) Double.parseDouble(v)).toArray());
                }
            }
            if (complete) {
                byLayer.put(Integer.parseInt(header.group(1)), rows);
            }
        }
        return byLayer;
    }

    private record Output(String stdout, String stderr) { }

    private Output run(List<String> command) throws IOException, InterruptedException {
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
        return new Output(Files.readString(stdout), Files.readString(stderr));
    }

    private static String tail(String text) {
        return text.length() <= 4000 ? text : text.substring(text.length() - 4000);
    }
}
