package dev.infertop.cli;

import dev.infertop.model.Layer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

/** {@code infertop [OPTIONS] (-p PID | -- COMMAND [ARGS...])}: trace a llama.cpp process. */
@Command(name = "infertop",
        mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        sortOptions = false,
        usageHelpAutoWidth = true,
        subcommands = {DemoCommand.class, ModelCommand.class, OverheadCommand.class},
        synopsisHeading = "Usage: ",
        customSynopsis = {
                "infertop [OPTIONS] -p PID [--follow NAME]",
                "       infertop [OPTIONS] -- COMMAND [ARGS...]",
                "       infertop demo [OPTIONS]",
                "       infertop model PRESET FILE",
                "       infertop overhead [--pairs N] [--layers LIST] -- COMMAND [ARGS...]"},
        description = {
                "",
                "Shows what a llama.cpp (GGML) inference engine does inside, live: tokens/s,",
                "TTFT and TPOT, graph computes per backend, and every CPU graph node on every",
                "thread (op, shape, work, barrier wait). eBPF uprobes are attached to the",
                "unmodified engine; nothing is restarted. Needs root (or CAP_BPF and",
                "CAP_PERFMON) and a kernel with BTF.",
                "",
                "On a terminal it opens a full-screen live view (header, thread lanes,",
                "operator table, latency plot; h for the keys). For scripts: a text block",
                "per interval (--batch, the default when stdout is not a terminal) or",
                "JSON Lines (--json)."},
        optionListHeading = "%nOptions:%n",
        commandListHeading = "%nCommands:%n",
        footerHeading = "%n",
        footer = {
                "Examples:",
                "  infertop -p $(pidof llama-server)          trace a running server",
                "  infertop --json -n 10 -p 4242               10 JSON intervals, then totals",
                "  infertop --json -- llama-bench -m m.gguf    launch, trace from the 1st token",
                "  infertop demo                               the built-in workload",
                "  infertop --op-when 'tps<5' -p 4242          operators only while slow",
                "  infertop overhead -- llama-bench -m m.gguf  what does tracing cost here?",
                "",
                "Live view keys (config/keys.conf; yours in ~/.config/infertop/keys.conf):",
                "  q quit  h help  j/k move  Enter latency  </> sort  / filter  g group",
                "  Space freeze  +/- refresh  1/2/3 token/graph/operator layer on/off",
                "  4 moe layer on/off  m MoE panel (expert heatmap)",
                "SIGUSR2 switches the operator layer off and on, live.",
                "Exit status: 0 ok; with -- COMMAND, the command's own status when it fails;",
                "1 error; 2 usage error. See infertop(1) for the JSON fields."})
public final class InfertopCommand implements Callable<Integer> {

    @Option(names = {"-p", "--pid"}, paramLabel = "PID", description = "Attach to this running process.")
    Integer pid;

    @Option(names = "--lib", paramLabel = "PATH",
            description = "Also probe this library (or executable) file; repeatable. For builds with unusual library names.")
    List<Path> libraries = new ArrayList<>();

    @Option(names = "--follow", paramLabel = "NAME",
            description = "When the target exits, wait for a new process whose name (comm) is NAME and trace it; "
                    + "alone, wait for the first one.")
    String follow;

    @Option(names = "--batch", description = "Print a text block every interval, like top -b (the default when "
            + "stdout is not a terminal).")
    boolean batch;

    @Option(names = "--json", description = "Print one JSON object per interval, then one with \"final\": true.")
    boolean json;

    @Option(names = {"-d", "--delay"}, paramLabel = "SECONDS", defaultValue = "1",
            description = "Seconds between intervals (default: ${DEFAULT-VALUE}).")
    double delaySeconds;

    @Option(names = {"-n", "--iterations"}, paramLabel = "N", defaultValue = "0",
            description = "Stop after N intervals (default: run until the target exits or Ctrl-C).")
    long iterations;

    @Option(names = "--layers", paramLabel = "LIST", split = ",", defaultValue = "token,graph,operator",
            description = "Probe layers to attach: token, graph, operator, moe (default: ${DEFAULT-VALUE}). "
                    + "moe needs operator and switches it on.")
    List<String> layers;

    @Option(names = "--op-every", paramLabel = "N", defaultValue = "1",
            description = "Operator layer: trace every Nth CPU graph (token) only (default: ${DEFAULT-VALUE}).")
    int operatorEvery;

    @Option(names = "--op-when", paramLabel = "RULE",
            description = "Operator layer only while RULE holds over the last interval: tps<N (decode tokens/s), "
                    + "tpot>MS or ttft>MS (p50), with <, <=, >, >=. E.g. 'tps<5'.")
    String operatorWhen;

    @Option(names = "--threads", paramLabel = "TIDS", split = ",",
            description = "Operator layer: report only these thread ids (see the JSON 'threads'); cheapest view.")
    List<Integer> operatorThreads = new ArrayList<>();

    @Option(names = "--btf", paramLabel = "FILE",
            description = "Kernel BTF to use instead of /sys/kernel/btf/vmlinux (for kernels built without it).")
    Path btf;

    @Option(names = "--ring-kib", paramLabel = "KIB", defaultValue = "4096",
            description = "Size of the event ring buffer in KiB, a power of two (default: ${DEFAULT-VALUE}).")
    int ringKib;

    @Parameters(paramLabel = "COMMAND", arity = "0..*",
            description = "After --: the command to launch and trace (it starts only once the probes are in place).")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        return new TraceRun(toOptions(Map.of(), null), System.out, System.err).run();
    }

    TraceOptions toOptions(Map<String, String> environment, Path targetLog) {
        if (batch && json) {
            throw new UserError("choose one of --batch and --json", 2);
        }
        Set<Layer> parsed = EnumSet.noneOf(Layer.class);
        for (String id : layers) {
            try {
                parsed.add(Layer.parse(id));
            } catch (IllegalArgumentException e) {
                throw new UserError("--layers: " + e.getMessage(), 2);
            }
        }
        TraceOptions.OutputMode mode = json ? TraceOptions.OutputMode.JSON
                : batch || !onTerminal() ? TraceOptions.OutputMode.BATCH : TraceOptions.OutputMode.LIVE;
        return new TraceOptions(pid, command, libraries, mode,
                delaySeconds, iterations, parsed, btf, ringKib, environment, targetLog, operatorEvery,
                operatorWhen == null ? null : OperatorRule.parse(operatorWhen), operatorThreads, follow);
    }

    /** Both stdin and stdout are a terminal: the live view can draw and read keys. */
    static boolean onTerminal() {
        java.io.Console console = System.console();
        return console != null && console.isTerminal();
    }
}
