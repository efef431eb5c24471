package dev.infertop.cli;

import dev.infertop.ffi.LibC;
import dev.infertop.ffi.OwnPriority;
import dev.infertop.ffi.UserDatabase;
import dev.infertop.process.Setpriv;
import dev.infertop.process.UserAccount;
import dev.infertop.session.StopTimeline;
import dev.infertop.session.LaunchUser;
import dev.infertop.session.Preflight;
import dev.infertop.session.TraceRun;
import dev.infertop.session.UserError;
import dev.infertop.workload.DebianLlamaCpp;
import dev.infertop.workload.DemoClient;
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
 * {@code infertop demo}: the built-in workload. Provisions llama.cpp if missing (by default Debian's packages,
 * which take seconds where a source build takes minutes), writes a synthetic model, starts llama-server on it
 * fed by built-in clients (or llama-bench in an endless prompt+generation loop), and traces it.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Trace a built-in workload: llama.cpp (Debian's packages, unpacked once into",
                "~/.cache/infertop; or a source build) serving a synthetic model to a steady stream of",
                "concurrent requests (or llama-bench's loop). q or Ctrl-C stops both."})
final class DemoCommand implements java.util.concurrent.Callable<Integer> {
    @ParentCommand
    InfertopCommand parent;

    @Option(names = "--model", paramLabel = "PRESET", defaultValue = "bench",
            description = "Synthetic model: tiny, tiny-moe, deep, bench, bench-moe (default: ${DEFAULT-VALUE}).")
    String preset;

    @Option(names = "--build", paramLabel = "KIND", defaultValue = "debian",
            description = "Which llama.cpp: debian: Debian sid's packages, prebuilt by the distribution (unpacked once "
                    + "into the cache in seconds, run as a container, traced by pid); source: built once from the "
                    + "source release in node-llama-cpp@" + LlamaCppWorkload.NODE_LLAMA_CPP_VERSION + " (minutes); "
                    + "npm: that package's prebuilt libraries under the source-built llama-bench (the llama-bench "
                    + "loop: they come without llama-server) (default: ${DEFAULT-VALUE}).")
    String build;

    @Option(names = "--prebuilt", description = "The same as --build npm.")
    boolean prebuilt;

    @Option(names = "--workload", paramLabel = "KIND", defaultValue = "server",
            description = "server: llama-server with 4 slots fed by built-in clients (concurrent requests of varied "
                    + "length); bench: llama-bench's endless prompt + generation loop (default: ${DEFAULT-VALUE}).")
    String workloadName;

    /** The demo server's parallel slots: more than its clients, so slots fill and empty. */
    static final int SERVER_SLOTS = 4;

    @Option(names = {"-t", "--threads"}, paramLabel = "N", defaultValue = "2",
            description = "llama.cpp threads (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--user", paramLabel = "USER",
            description = "Run the workload as USER, who must be able to read infertop's cache (root's home is often "
                    + "private: set INFERTOP_CACHE). Default: infertop's own user, also through sudo (the workload is "
                    + "infertop's own build, in its own cache).")
    String user;

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
        if (!workloadName.equals("server") && !workloadName.equals("bench")) {
            throw new UserError("--workload must be server or bench, got '" + workloadName + "'", 2);
        }
        if (threads < 1 || threads > 512) {
            throw new UserError("--threads must be between 1 and 512, got " + threads, 2);
        }
        if (parent.pid != null || parent.follow != null || !parent.command.isEmpty()) {
            throw new UserError("demo runs its own workload: drop -p, --follow and -- COMMAND "
                    + "(or trace your process without 'demo')", 2);
        }
        String kind = prebuilt ? "npm" : build;
        if (!kind.equals("debian") && !kind.equals("source") && !kind.equals("npm")) {
            throw new UserError("--build must be debian, source or npm, got '" + build + "'", 2);
        }
        if (prebuilt && !build.equals("debian") && !build.equals("npm")) {
            throw new UserError("--prebuilt is --build npm: drop one of --prebuilt and --build " + build, 2);
        }
        Preflight.requirePrivileges();
        if (kind.equals("debian")) {
            return traceDebian(model);
        }
        LlamaCppWorkload workload;
        try {
            workload = LlamaCppWorkload.ensure(System.err);
        } catch (IOException e) {
            throw new UserError(e.getMessage());
        }
        Path modelFile = cachedModel(model);
        boolean server = workloadName.equals("server") && !prebuilt;
        Path tool = prebuilt ? workload.prebuiltDir().resolve("llama-bench")
                : workload.sourceBuildTool(server ? "llama-server" : "llama-bench");
        String runAs = demoUser(tool, modelFile);
        if (workloadName.equals("server") && prebuilt) {
            System.err.println("infertop: demo: the prebuilt npm libraries come without llama-server: "
                    + "running the llama-bench loop on them");
        }
        Map<String, String> environment = prebuilt ? workload.prebuiltEnvironment() : Map.of();
        Path log = LlamaCppWorkload.cacheDir().resolve("demo-target.log");
        int port = server ? DemoClient.freePort() : 0;
        System.err.println("infertop: demo: " + tool.getFileName() + " on " + modelFile.getFileName()
                + (prebuilt ? " (prebuilt npm libraries)" : " (source build " + workload.releaseTag() + ")")
                + (server ? ", " + SERVER_SLOTS + " slots on 127.0.0.1:" + port + ", fed by " + DemoClient.CONCURRENT
                        + " concurrent clients" : "")
                + "; its output goes to " + log);
        // The trace options are the parent command's as picocli filled them (defaults included: a command
        // object built by hand has none), with the demo's own workload and output choices on top.
        InfertopCommand trace = parent;
        trace.command = server
                // A server with continuous batching: requests of varied length come and go in its slots.
                ? List.of(tool.toString(), "-m", modelFile.toString(), "-np", Integer.toString(SERVER_SLOTS),
                        "-c", "8192", "--host", "127.0.0.1", "--port", Integer.toString(port), "-t",
                        Integer.toString(threads), "--metrics")
                // -pg: each repetition is one prompt (prefill) and then a generation, like a stream of requests.
                : List.of(tool.toString(), "-m", modelFile.toString(), "-p", "0", "-n", "0",
                        "-pg", "64,64", "-r", "1000000", "-t", Integer.toString(threads), "--no-warmup");
        trace.user = runAs;
        outputOptions(trace);
        if (server) {
            // The clients retry until the server, held at infertop's gate until the probes are in, answers.
            try (DemoClient clients = DemoClient.start(port)) {
                return new TraceRun(trace.toOptions(environment, log), System.out, System.err,
                        new Version().getVersion()[0]).run();
            }
        }
        return new TraceRun(trace.toOptions(environment, log), System.out, System.err,
                new Version().getVersion()[0]).run();
    }

    /** The preset's file in the cache's models directory, written first (with progress) when missing. */
    private static Path cachedModel(SyntheticModel model) throws IOException {
        Path modelDir = LlamaCppWorkload.cacheDir().resolve("models");
        Files.createDirectories(modelDir);
        Path modelFile = model.cachedFile(modelDir);
        if (!Files.isRegularFile(modelFile) || Files.size(modelFile) != model.fileSizeBytes()) {
            ModelCommand.write(model, modelFile);
        }
        return modelFile;
    }

    /** The demo's own output choices on top of the parent command's. */
    private void outputOptions(InfertopCommand trace) {
        trace.batch |= batch;
        trace.json |= json;
        trace.delaySeconds = delaySeconds;
        trace.iterations = iterations;
    }

    /**
     * --build debian: Debian's llama-server (or llama-bench) started from its root as a container, as the packaged
     * service's user, and traced by its pid on the host once it has mapped the model (its CPU variant chosen by
     * then); the container is stopped when the trace ends, by q, -n, a signal or an error.
     */
    private int traceDebian(SyntheticModel model) throws IOException {
        DebianLlamaCpp debian;
        try {
            debian = DebianLlamaCpp.ensure(System.err);
        } catch (IOException e) {
            throw new UserError(e.getMessage());
        }
        Path modelFile = cachedModel(model);
        boolean server = workloadName.equals("server");
        String toolName = server ? "llama-server" : "llama-bench";
        String inside = "/models/" + modelFile.getFileName();
        int port = server ? DemoClient.freePort() : 0;
        List<String> arguments = server
                ? List.of(DebianLlamaCpp.tool(toolName), "-m", inside, "-np", Integer.toString(SERVER_SLOTS), "-c",
                        "8192", "--host", "127.0.0.1", "--port", Integer.toString(port), "-t",
                        Integer.toString(threads), "--metrics")
                : List.of(DebianLlamaCpp.tool(toolName), "-m", inside, "-p", "0", "-n", "0", "-pg", "64,64", "-r",
                        "1000000", "-t", Integer.toString(threads), "--no-warmup");
        String[] runAs = containerUser(debian);
        Path log = LlamaCppWorkload.cacheDir().resolve("demo-target.log");
        System.err.println("infertop: demo: " + toolName + " from Debian's packages (" + debian.versions()
                + ") in a container as " + runAs[1] + ", on " + modelFile.getFileName()
                + (server ? ", " + SERVER_SLOTS + " slots on 127.0.0.1:" + port + ", fed by " + DemoClient.CONCURRENT
                        + " concurrent clients" : "")
                + "; its output goes to " + log + "; traced once it has loaded the model (seconds)");
        ProcessBuilder builder = new ProcessBuilder(debian.containerCommand(runAs[0], modelFile.getParent(),
                List.of(PASSIVE_WAITS), arguments.toArray(String[]::new)))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
        Process container = OwnPriority.start(builder);
        // SIGINT, SIGTERM, SIGHUP: the trace's own hook detaches; this one stops the container beside it.
        java.util.concurrent.atomic.AtomicLong toolPid = new java.util.concurrent.atomic.AtomicLong();
        Thread stopper = new Thread(() -> stopContainer(container, toolPid.get()), "infertop-demo-container");
        Runtime.getRuntime().addShutdownHook(stopper);
        try {
            long pid = awaitTool(container, toolName, modelFile.getFileName().toString(), log);
            toolPid.set(pid);
            InfertopCommand trace = parent;
            trace.pid = Math.toIntExact(pid);
            trace.user = null; // the container has its user; --user is for a launched command
            outputOptions(trace);
            if (server) {
                // The server idles until the probes are in (a request begun before would be half seen); the
                // clients then retry until it answers.
                try (DemoClient clients = DemoClient.startWhen(port, DemoCommand::probesAttached)) {
                    return new TraceRun(trace.toOptions(Map.of(), null), System.out, System.err,
                            new Version().getVersion()[0]).run();
                }
            }
            return new TraceRun(trace.toOptions(Map.of(), null), System.out, System.err,
                    new Version().getVersion()[0]).run();
        } finally {
            StopTimeline.mark("demo's clients stopped", System.err);
            stopContainer(container, toolPid.get());
            StopTimeline.mark("demo's container stopped", System.err);
            try {
                Runtime.getRuntime().removeShutdownHook(stopper);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs (or ran) the same stop
            }
        }
    }

    /**
     * Debian builds ggml with OpenMP, whose threads spin at each of a graph's barriers by default: beside the demo's
     * clients and infertop on a machine with as many cores as threads (or a busy one), a spinning thread holds the
     * core that the thread it waits for needs, and generation ran many times slower. Waiting threads sleep instead.
     */
    private static final String PASSIVE_WAITS = "OMP_WAIT_POLICY=PASSIVE";

    /**
     * SIGKILL to the container's command (PID 1 of its namespace: every process there goes with it; the demo's
     * workload keeps nothing worth a graceful stop, and q stays prompt), SIGTERM to its runner, which then removes
     * its overlay's directories on its own, after infertop has exited. The command is also killed by its pid once
     * known ({@code toolPid}, 0 before): a SIGHUP from a closed terminal reaches the runner's unshare too, and the
     * command outlives it (run as another user, it has no parent-death signal), no longer a descendant.
     */
    private static void stopContainer(Process container, long toolPid) {
        container.toHandle().descendants().filter(p -> p.parent().map(DemoCommand::isUnshare).orElse(false))
                .forEach(ProcessHandle::destroyForcibly);
        if (toolPid > 0) {
            ProcessHandle.of(toolPid).ifPresent(ProcessHandle::destroyForcibly);
        }
        container.destroy();
    }

    /**
     * The host pid of the tool the container runs, once it has mapped {@code modelName} (ggml maps its CPU
     * variants, scores them and keeps one before the model is loaded); one line and exit 1 if the container ends
     * first or the tool does not get there within {@link #TOOL_START_TIMEOUT_S} s.
     */
    private static long awaitTool(Process container, String comm, String modelName, Path log) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(TOOL_START_TIMEOUT_S);
        while (System.nanoTime() < deadline) {
            java.util.Optional<ProcessHandle> tool = container.toHandle().descendants()
                    .filter(p -> comm.equals(commOf(p.pid()))).findFirst();
            if (tool.isPresent() && mapsFile(tool.get().pid(), modelName)) {
                return tool.get().pid();
            }
            if (!container.isAlive()) {
                throw new UserError("demo: the container ended (exit " + container.exitValue() + ") before " + comm
                        + " loaded the model: see " + log);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UserError("demo: interrupted while " + comm + " started", 130);
            }
        }
        throw new UserError("demo: " + comm + " did not load the model within " + TOOL_START_TIMEOUT_S
                + " s: see " + log);
    }

    private static final long TOOL_START_TIMEOUT_S = 120;

    /**
     * Whether this process holds a uprobe yet: a probe the trace attaches is a BPF link (uprobe-multi) or a perf
     * event file descriptor, and they are attached together, a moment before the first interval. (The object's
     * maps and programs are other anonymous inodes, open before any probe.)
     */
    private static boolean probesAttached() {
        try (java.util.stream.Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    return target.equals("anon_inode:[perf_event]") || target.equals("anon_inode:bpf_link");
                } catch (IOException e) {
                    return false; // closed meanwhile
                }
            });
        } catch (IOException e) {
            return true; // no /proc/self/fd to read: let the clients go
        }
    }

    /** The runner's unshare(1), whose child is the container's PID 1. */
    private static boolean isUnshare(ProcessHandle process) {
        return commOf(process.pid()).equals("unshare");
    }

    private static String commOf(long pid) {
        try {
            return Files.readString(Path.of("/proc/" + pid + "/comm")).strip();
        } catch (IOException e) {
            return "";
        }
    }

    private static boolean mapsFile(long pid, String name) {
        try {
            return Files.readString(Path.of("/proc/" + pid + "/maps")).contains("/" + name + "\n");
        } catch (IOException e) {
            return false; // not readable yet, or gone
        }
    }

    /**
     * Who runs Debian's tool in the container, as {uid:gid, a name to show}: --user USER, else the packaged
     * service's user (made the same number on the host by the provisioning), else root inside the container.
     */
    private String[] containerUser(DebianLlamaCpp debian) {
        String chosen = user != null ? user : parent.user;
        if (chosen != null) {
            UserAccount account = UserAccount.lookup(chosen)
                    .orElseThrow(() -> new UserError("demo --user " + chosen + ": no such user", 2));
            return new String[] {account.uid() + ":" + account.gid(), account.name()};
        }
        return debian.serviceUser().map(ids -> new String[] {ids, DebianLlamaCpp.SERVICE_USER})
                .orElse(new String[] {"0:0", "root"});
    }

    /**
     * Who runs the workload: --user (checked to reach the tool and the model in the cache, or one line and exit
     * 2), else infertop's own user even through sudo. Unlike a user's own command, the workload is infertop's
     * build in infertop's cache, which sudo's caller often cannot read (root's home is 0700 on most systems).
     */
    private String demoUser(Path tool, Path modelFile) {
        String chosen = user != null ? user : parent.user;
        if (chosen == null) {
            if (System.getenv("SUDO_UID") != null) {
                System.err.println("infertop: demo: the workload runs as infertop's user, not sudo's caller (it is "
                        + "infertop's own build in " + LlamaCppWorkload.cacheDir() + "); --user USER runs it as USER");
            }
            // Named as a uid, so the sudo default (sudo's caller) does not apply and no note is printed.
            return Integer.toUnsignedString(LibC.geteuid());
        }
        LaunchUser choice = LaunchUser.choose(chosen, System.getenv(), UserDatabase.realUid(),
                LibC.geteuid(), LaunchUser.Directory.SYSTEM);
        if (choice.account().isPresent()) {
            UserAccount account = choice.account().get();
            java.util.Optional<Path> setpriv = Setpriv.find();
            if (setpriv.isPresent()) { // without it, the trace run says so
                try {
                    java.util.Optional<Path> unusable = Setpriv.firstUnusable(setpriv.get(),
                            account, List.of(tool), List.of(modelFile));
                    if (unusable.isPresent()) {
                        throw new UserError("demo --user " + account.name() + ": " + account.name() + " cannot reach "
                                + unusable.get() + " (infertop's cache " + LlamaCppWorkload.cacheDir() + " may be in "
                                + "a private home): set INFERTOP_CACHE to a directory " + account.name()
                                + " can read, or run the demo without --user", 2);
                    }
                } catch (IOException e) {
                    throw new UserError("demo --user " + account.name() + ": " + e.getMessage(), 2);
                }
            }
        }
        return chosen;
    }
}
