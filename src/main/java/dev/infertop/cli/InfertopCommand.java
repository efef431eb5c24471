package dev.infertop.cli;

import dev.infertop.io.FileAccess;
import dev.infertop.model.SafeText;
import dev.infertop.process.AttachPatience;
import dev.infertop.snapshot.SnapshotOptions;
import dev.infertop.model.Layer;
import dev.infertop.session.ListenOption;
import dev.infertop.session.OperatorRule;
import dev.infertop.session.TraceOptions;
import dev.infertop.session.TraceRun;
import dev.infertop.session.UserError;
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

/**
 * {@code infertop [OPTIONS] (-p PID | -- COMMAND [ARGS...])}: trace a llama.cpp process. Its subcommands are
 * added by {@link Main#commandLine}, only where the arguments may name one.
 */
@Command(name = "infertop",
        mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        sortOptions = false,
        usageHelpAutoWidth = true,
        synopsisHeading = "Usage: ",
        customSynopsis = {
                "infertop [OPTIONS] -p PID [--follow NAME [--any-user]]",
                "       infertop [OPTIONS] [--user USER] -- COMMAND [ARGS...]",
                "       infertop demo [OPTIONS]",
                "       infertop model PRESET FILE",
                "       infertop overhead [--pairs N] [--layers LIST] -- COMMAND [ARGS...]",
                "       infertop report DIR [--json]",
                "       infertop replay DIR",
                "       infertop diff A B [--json] [--html FILE] [--fail-on PCT]"},
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
                "  infertop --snapshot-on-exit -- llama-bench -m m.gguf; infertop report infertop-*",
                "  infertop --dag d.svg -- llama-bench -m m.gguf  operator DAG of the last token",
                "  infertop --quiet --follow llama-server --listen :9464  Prometheus metrics only",
                "",
                "Live view keys (config/keys.conf; yours in ~/.config/infertop/keys.conf):",
                "  q quit  h help  j/k move  Enter latency  </> sort  / filter  g group",
                "  Space freeze  +/- refresh  1/2/3 token/graph/operator layer on/off",
                "  6 counters layer on/off  c counters panel (IPC, L3 refills, verdict)",
                "  s snapshot",
                "  b backends panel  d write the operator DAG (infertop-dag-PID-TIME.dot)",
                "  4 moe layer on/off  m MoE panel (expert heatmap)",
                "  R roofline panel (GB/s, GFLOP/s, verdict per op; decode bound vs measured)",
                "SIGUSR2 switches the operator layer off and on, live.",
                "Snapshots (s, SIGUSR1, --snapshot-every, --snapshot-on-exit) are directories:",
                "summary.json, latency.hlog, trace.json (Perfetto), report.html;",
                "read them with infertop report DIR or infertop replay DIR; compare two runs",
                "with infertop diff A B. Only their owner (root) may read them and the DAG",
                "files unless --snapshot-mode shared.",
                "Exit status: 0 ok; with -- COMMAND, the command's own status when it fails;",
                "1 error; 2 usage error; 70 internal error (out of memory too: probes are",
                "detached first). See infertop(1) for the JSON fields."})
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

    @Option(names = "--any-user", description = "--follow picks processes of any user; without it only yours (sudo's "
            + "caller through sudo, else your real uid), and a skipped one is named once.")
    boolean anyUser;

    @Option(names = "--user", paramLabel = "USER",
            description = "Run the launched COMMAND as USER (name or uid; its groups, HOME, USER, LOGNAME). Through "
                    + "sudo the default is sudo's caller (said once); --user root keeps root.")
    String user;

    @Option(names = "--env", paramLabel = "NAME=VALUE",
            description = "Set NAME to VALUE in the launched COMMAND's environment; repeatable. The command gets only "
                    + "PATH, TERM, LANG, HOME, USER, LOGNAME (the user's) and these: nothing else of infertop's "
                    + "environment (e.g. --env LD_LIBRARY_PATH=/opt/llama/lib).")
    List<String> env = new ArrayList<>();

    @Option(names = "--batch", description = "Print a text block every interval, like top -b (the default when "
            + "stdout is not a terminal).")
    boolean batch;

    @Option(names = "--json", description = "Print one JSON object per interval, then one with \"final\": true.")
    boolean json;

    @Option(names = "--quiet", description = "No output per interval: a headless exporter with --listen (notices "
            + "still go to stderr).")
    boolean quiet;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
            description = "Also serve Prometheus metrics at http://HOST:PORT/metrics (OpenMetrics; the Prometheus text "
                    + "format when the scrape asks for it), next to any output. :PORT is loopback; every interface only "
                    + "when named (0.0.0.0:PORT). E.g. 127.0.0.1:9464.")
    String listen;

    @Option(names = "--web-config", paramLabel = "FILE",
            description = "TLS and basic auth for --listen, from a Prometheus exporter-toolkit web config: "
                    + "tls_server_config (cert_file, key_file: PEM, PKCS#8 key) and basic_auth_users (user: bcrypt "
                    + "hash). Read at start; an unknown key is an error.")
    Path webConfig;

    @Option(names = {"-d", "--delay"}, paramLabel = "SECONDS", defaultValue = "1",
            description = "Seconds between intervals (default: ${DEFAULT-VALUE}; the live view's first is 0.25 s).")
    double delaySeconds;

    @Option(names = {"-n", "--iterations"}, paramLabel = "N", defaultValue = "0",
            description = "Stop after N intervals (default: run until the target exits or Ctrl-C).")
    long iterations;

    @Option(names = "--layers", paramLabel = "LIST", split = ",", defaultValue = "token,graph,operator",
            description = "Probe layers to attach: token, graph, operator, moe, sched, counters (default: ${DEFAULT-VALUE}). "
                    + "moe needs operator and switches it on; sched watches every context switch of the machine for "
                    + "the target's threads.")
    List<String> layers;

    @Option(names = "--op-every", paramLabel = "N", defaultValue = "1",
            description = "Operator layer: trace every Nth CPU graph (token) only (default: ${DEFAULT-VALUE}).")
    int operatorEvery;

    @Option(names = "--op-sample-hz", paramLabel = "HZ", defaultValue = "500",
            description = "Operator layer: a clock interrupt per busy CPU HZ times a second names the op each of the "
                    + "target's threads is in, between the exact windows too; 0: no sampler (default: ${DEFAULT-VALUE}).")
    int opSampleHz;

    @Option(names = "--budget", paramLabel = "PCT", defaultValue = "1",
            description = "Keep infertop's estimated cost under PCT %% of the target's own CPU time (probe hits x the "
                    + "measured cost of a hit, BPF run time, infertop's CPU) by sampling the operator layer's "
                    + "per-thread probes in windows; 0: no limit, trace every graph (default: ${DEFAULT-VALUE}).")
    double budgetPercent;

    @Option(names = "--patience", paramLabel = "N", defaultValue = "1",
            description = "Wait N times longer for attach-time work: reading each of the target's libraries (10 s) "
                    + "and the calibration child (30 s). For emulated machines and slow boards (default: "
                    + "${DEFAULT-VALUE}, at most " + AttachPatience.MAX_FACTOR + ").")
    int patience;

    @Option(names = "--op-when", paramLabel = "RULE",
            description = "Operator layer only while RULE holds over the last interval: tps<N (decode tokens/s), "
                    + "tpot>MS or ttft>MS (p50), with <, <=, >, >=. E.g. 'tps<5'.")
    String operatorWhen;

    @Option(names = "--threads", paramLabel = "TIDS", split = ",",
            description = "Operator layer: report only these thread ids (see the JSON 'threads'); cheapest view.")
    List<Integer> operatorThreads = new ArrayList<>();

    @Option(names = "--counters", paramLabel = "SET|EVENTS",
            description = "Counters layer (--layers ...,counters or key 6): a set from counters.conf (x86_64, arm64, "
                    + "arm64-stalls, software, or yours in ~/.config/infertop/counters.conf) or up to 4 events, "
                    + "e.g. refills=cache-misses,instructions=instructions,cycles=cycles (default: this CPU's set).")
    String counters;

    @Option(names = "--btf", paramLabel = "FILE",
            description = "Kernel BTF to use instead of /sys/kernel/btf/vmlinux (for kernels built without it).")
    Path btf;

    @Option(names = "--ring-kib", paramLabel = "KIB", defaultValue = "4096",
            description = "Size of the event ring buffer in KiB, a power of two (default: ${DEFAULT-VALUE}).")
    int ringKib;

    @Option(names = "--snapshot-dir", paramLabel = "PATTERN", defaultValue = "infertop-%p-%t",
            description = "Where snapshots go: a directory per snapshot, %%p the pid, %%t the time, %%n the number "
                    + "(default: ${DEFAULT-VALUE}).")
    String snapshotDir;

    @Option(names = "--snapshot-every", paramLabel = "SECONDS", defaultValue = "0",
            description = "Write a snapshot every SECONDS (default: only on s, SIGUSR1 or --snapshot-on-exit).")
    double snapshotEverySeconds;

    @Option(names = "--snapshot-on-exit", description = "Write a snapshot of the whole run when tracing ends.")
    boolean snapshotOnExit;

    @Option(names = "--flight-seconds", paramLabel = "SECONDS", defaultValue = "10",
            description = "How far back a snapshot's timeline (trace.json) reaches; 0 keeps none (default: ${DEFAULT-VALUE}).")
    double flightSeconds;

    @Option(names = "--snapshot-mode", paramLabel = "MODE", defaultValue = "private",
            description = "Who may read snapshot directories and DAG files (d, --dag), which hold the model path, "
                    + "prompt lengths and process names: private (directories 0700, files 0600, whatever the umask) "
                    + "or shared (0755, 0644) (default: ${DEFAULT-VALUE}).")
    String snapshotMode;

    @Option(names = "--dag", paramLabel = "FILE",
            description = "At exit, write the operator DAG of the last decode graph (critical path in red) to FILE: "
                    + "Graphviz DOT for .dot, SVG for .svg (drawn by infertop: repeated blocks folded). Needs the operator layer.")
    Path dagFile;

    @Parameters(paramLabel = "COMMAND", arity = "0..*",
            description = "After --: the command to launch and trace (it starts only once the probes are in place).")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        return new TraceRun(toOptions(Map.of(), null), System.out, System.err,
                new Version().getVersion()[0]).run();
    }

    TraceOptions toOptions(Map<String, String> environment, Path targetLog) {
        if ((batch ? 1 : 0) + (json ? 1 : 0) + (quiet ? 1 : 0) > 1) {
            throw new UserError("choose one of --batch, --json and --quiet", 2);
        }
        Set<Layer> parsed = EnumSet.noneOf(Layer.class);
        for (String id : layers) {
            try {
                parsed.add(Layer.parse(id));
            } catch (IllegalArgumentException e) {
                throw new UserError("--layers: " + e.getMessage(), 2);
            }
        }
        try {
            // process-wide: the limits are read where the libraries are scanned, long after the options
            AttachPatience.set(patience);
        } catch (IllegalArgumentException e) {
            throw new UserError("--patience: " + e.getMessage(), 2);
        }
        Map<String, String> commandEnvironment = new java.util.LinkedHashMap<>(environment);
        commandEnvironment.putAll(parseEnv(env, !command.isEmpty()));
        var listenAddress = ListenOption.parse(listen);
        TraceOptions.OutputMode mode = json ? TraceOptions.OutputMode.JSON
                : quiet ? TraceOptions.OutputMode.QUIET
                : batch || !onTerminal() ? TraceOptions.OutputMode.BATCH : TraceOptions.OutputMode.LIVE;
        return new TraceOptions(pid, command, libraries, mode,
                delaySeconds, iterations, parsed, btf, ringKib, commandEnvironment, targetLog, operatorEvery,
                budgetPercent, operatorWhen == null ? null : OperatorRule.parse(operatorWhen), operatorThreads, follow, counters,
                new SnapshotOptions(snapshotDir, snapshotEverySeconds, snapshotOnExit,
                        flightSeconds, snapshotAccess()), dagFile, listenAddress,
                ListenOption.webConfig(webConfig, listenAddress), user, anyUser, opSampleHz);
    }

    /** --env NAME=VALUE entries: NAME a shell variable name, neither part holding a NUL; only with -- COMMAND. */
    static Map<String, String> parseEnv(List<String> entries, boolean hasCommand) {
        if (!entries.isEmpty() && !hasCommand) {
            throw new UserError("--env sets the launched command's environment: use it with -- COMMAND", 2);
        }
        Map<String, String> parsed = new java.util.LinkedHashMap<>();
        for (String entry : entries) {
            int equals = entry.indexOf('=');
            String name = equals < 0 ? entry : entry.substring(0, equals);
            if (equals < 0 || !name.matches("[A-Za-z_][A-Za-z0-9_]*") || entry.indexOf('\0') >= 0) {
                throw new UserError("--env takes NAME=VALUE (NAME letters, digits and _, not starting with a digit), "
                        + "got '" + SafeText.of(entry) + "'", 2);
            }
            parsed.put(name, entry.substring(equals + 1));
        }
        return parsed;
    }

    private FileAccess snapshotAccess() {
        try {
            return FileAccess.parse(snapshotMode);
        } catch (IllegalArgumentException e) {
            throw new UserError("--snapshot-mode: " + e.getMessage(), 2);
        }
    }

    /** Both stdin and stdout are a terminal: the live view can draw and read keys. */
    static boolean onTerminal() {
        java.io.Console console = System.console();
        return console != null && console.isTerminal();
    }
}
