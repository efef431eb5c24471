package dev.infertop.cli;

import dev.infertop.workload.LlamaCppWorkload;
import dev.infertop.workload.SyntheticModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code infertop demo}: the built-in workload. Provisions llama.cpp if missing, writes a synthetic model,
 * starts llama-bench on it in an endless prompt+generation loop, and traces it.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Trace a built-in workload: llama.cpp (built once into ~/.cache/infertop) running a",
                "synthetic model in a steady prompt + generation loop. Ctrl-C stops both."})
final class DemoCommand implements java.util.concurrent.Callable<Integer> {
    @ParentCommand
    InfertopCommand parent;

    @Option(names = "--model", paramLabel = "PRESET", defaultValue = "bench",
            description = "Synthetic model: tiny, tiny-moe, deep, bench, bench-moe (default: ${DEFAULT-VALUE}).")
    String preset;

    @Option(names = "--prebuilt", description = "Run on the prebuilt npm libraries instead of the source build.")
    boolean prebuilt;

    @Option(names = {"-t", "--threads"}, paramLabel = "N", defaultValue = "2",
            description = "llama.cpp threads (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--batch", description = "Text block per interval (the default when stdout is not a terminal).")
    boolean batch;

    @Option(names = "--json", description = "JSON Lines output.")
    boolean json;

    @Option(names = {"-d", "--delay"}, paramLabel = "SECONDS", defaultValue = "1", description = "Seconds between intervals.")
    double delaySeconds;

    @Option(names = {"-n", "--iterations"}, paramLabel = "N", defaultValue = "0", description = "Stop after N intervals.")
    long iterations;

    @Override
    public Integer call() throws IOException {
        SyntheticModel model = ModelCommand.resolve(preset);
        if (threads < 1 || threads > 512) {
            throw new UserError("--threads must be between 1 and 512, got " + threads, 2);
        }
        if (parent.pid != null || parent.follow != null || !parent.command.isEmpty()) {
            throw new UserError("demo runs its own workload: drop -p, --follow and -- COMMAND "
                    + "(or trace your process without 'demo')", 2);
        }
        Preflight.requirePrivileges();
        LlamaCppWorkload workload;
        try {
            workload = LlamaCppWorkload.ensure(System.err);
        } catch (IOException e) {
            throw new UserError(e.getMessage());
        }
        Path modelDir = LlamaCppWorkload.cacheDir().resolve("models");
        Files.createDirectories(modelDir);
        Path modelFile = model.cachedFile(modelDir);
        if (!Files.isRegularFile(modelFile) || Files.size(modelFile) != model.fileSizeBytes()) {
            ModelCommand.write(model, modelFile);
        }
        Path bench = prebuilt ? workload.prebuiltDir().resolve("llama-bench") : workload.sourceBuildTool("llama-bench");
        Map<String, String> environment = prebuilt ? workload.prebuiltEnvironment() : Map.of();
        Path log = LlamaCppWorkload.cacheDir().resolve("demo-target.log");
        System.err.println("infertop: demo: " + bench.getFileName() + " on " + modelFile.getFileName()
                + (prebuilt ? " (prebuilt npm libraries)" : " (source build " + workload.releaseTag() + ")")
                + "; its output goes to " + log);
        // -pg: each repetition is one prompt (prefill) and then a generation, like a stream of requests.
        // The trace options are the parent command's as picocli filled them (defaults included: a command
        // object built by hand has none), with the demo's own workload and output choices on top.
        InfertopCommand trace = parent;
        trace.command = List.of(bench.toString(), "-m", modelFile.toString(), "-p", "0", "-n", "0",
                "-pg", "64,64", "-r", "1000000", "-t", Integer.toString(threads), "--no-warmup");
        trace.batch |= batch;
        trace.json |= json;
        trace.delaySeconds = delaySeconds;
        trace.iterations = iterations;
        return new TraceRun(trace.toOptions(environment, log), System.out, System.err).run();
    }
}
