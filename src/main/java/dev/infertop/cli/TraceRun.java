package dev.infertop.cli;

import dev.infertop.agg.Collector;
import dev.infertop.agg.CalibratedOpNaming;
import dev.infertop.agg.OpNaming;
import dev.infertop.agg.OperatorAggregator;
import dev.infertop.agg.SchedAggregator;
import dev.infertop.agg.TraceAggregator;
import dev.infertop.event.EventDecoder;
import dev.infertop.event.NameTable;
import dev.infertop.io.TargetLog;
import dev.infertop.target.layout.CalibratedLayout;
import dev.infertop.target.layout.CalibrationException;
import dev.infertop.target.layout.GraphLayout;
import dev.infertop.target.layout.LayoutCalibrator;
import dev.infertop.target.layout.TensorLayout;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.BpfObject;
import dev.infertop.bpf.InfertopProbes;
import dev.infertop.bpf.PerCpuCounter;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.bpf.RingBufferReader;
import dev.infertop.model.BackendNames;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.TargetInfo;
import dev.infertop.target.AttachedProcess;
import dev.infertop.target.ElfFile;
import dev.infertop.target.LaunchedCommand;
import dev.infertop.target.LibraryResolver;
import dev.infertop.target.MemoryMapping;
import dev.infertop.target.ProcessMaps;
import dev.infertop.target.ResolvedLibraries;
import dev.infertop.target.TargetException;
import dev.infertop.target.TracedProcess;
import dev.infertop.view.BatchTextView;
import dev.infertop.view.JsonLinesView;
import dev.infertop.view.SnapshotView;
import dev.infertop.view.Theme;
import dev.infertop.tui.KeyTable;
import dev.infertop.tui.LiveMonitor;
import dev.infertop.tui.LiveView;
import dev.infertop.tui.TerminalSession;
import dev.infertop.workload.LlamaCppWorkload;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import dev.infertop.snapshot.SnapshotTaker;

/**
 * One tracing session, start to finish: check the environment, find the target and its libraries, load and
 * attach the probes, run the collector, and tear everything down in reverse on every exit path (normal end,
 * target exit, SIGINT/SIGTERM/SIGHUP through the shutdown hook, or an error).
 */
final class TraceRun {
    /**
     * Before calibration succeeds, the graph layer still reports n_nodes at its offset in every release so
     * far (`int size; int n_nodes;`); a wrong value only shows a wrong node count, never a wrong read.
     */
    private static final InfertopProbes.StructOffsets UNCALIBRATED = new InfertopProbes.StructOffsets(4, 16, 0, 0, 0,
            0, 0, 0, 0, 0, 0);

    /** How long a quit may take to detach every probe before the shutdown hook detaches them itself. */
    static final long DETACH_WAIT_MS = 1000;
    /** How long snapshots still being written at the end may take (probes are detached by then). */
    static final long SNAPSHOT_GRACE_MS = 15_000;

    /** Nice value of infertop's own threads while tracing. */
    static final int OWN_NICE = 10;

    private final TraceOptions options;
    private final PrintStream out;
    private final PrintStream err;

    TraceRun(TraceOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    /** How a traced process's session ended: the collector's state and infertop's exit status. */
    private record SessionEnd(dev.infertop.model.RunState state, int status) {}

    /** The full-screen view, once started; lives across the sessions of --follow. */
    private volatile LiveSession live;
    /** The session being traced, for the shutdown hook and the live view's quit. */
    private volatile Resources current;
    private volatile SessionState currentSession;
    /** q, a signal, or a failure: stop tracing, stop waiting for a process to follow. */
    private volatile boolean stopping;
    private volatile double intervalSeconds;
    /** The session's snapshot writer (s, SIGUSR1, --snapshot-every, --snapshot-on-exit), and their numbers. */
    private volatile SnapshotTaker snapshots;
    /** --listen: the metrics endpoint, across the sessions of --follow; null without the option. */
    private dev.infertop.metrics.MetricsServer metrics;
    /** The launched command's log, held open (the command appends through /proc/PID/fd/N) until the run ends. */
    private TargetLog targetLog;
    private final AtomicInteger snapshotNumbers = new AtomicInteger();

    /** The counters layer's events (read whether or not the layer is on, so a bad --counters fails early). */
    private dev.infertop.model.CounterSet counterSet;

    private dev.infertop.model.CounterSet chooseCounterSet() {
        try {
            return dev.infertop.model.CounterSets.load().choose(options.counters(), InfertopProbes.architecture());
        } catch (IllegalArgumentException e) {
            throw new UserError((options.counters() == null ? "" : "--counters " + options.counters() + ": ")
                    + e.getMessage(), 2);
        }
    }

    /** The user infertop acts for (--follow's owner filter, whose a -p process is). */
    private InvokingUser invoking;
    /** Who runs the launched command (--user, sudo's caller, or infertop's user), and the setpriv for it. */
    private LaunchedCommand.RunAs runAs;
    /** Said when the command starts (not before a failure: bad input stays one line). */
    private String launchUserNote;

    int run() {
        options.validate();
        invoking = InvokingUser.of(System.getenv(), dev.infertop.ffi.UserDatabase.realUid());
        runAs = options.command().isEmpty() ? null : chooseLaunchUser();
        counterSet = chooseCounterSet();
        Preflight.requirePrivileges();
        Path btf = Preflight.requireBtf(options.btf());
        intervalSeconds = options.delaySeconds();

        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            // SIGINT, SIGTERM, SIGHUP: the probes come off within a second whatever the main thread is doing;
            // a snapshot being written then gets a grace period, and is abandoned cleanly after it.
            stop();
            Resources resources = current;
            if (resources != null && !resources.awaitDetached(DETACH_WAIT_MS)) {
                resources.detachWithin(DETACH_WAIT_MS);
            }
            try {
                if (!finished.await(SNAPSHOT_GRACE_MS + DETACH_WAIT_MS, TimeUnit.MILLISECONDS)) {
                    SnapshotTaker taker = snapshots;
                    if (taker != null) {
                        taker.abandon();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closeLive(); // the terminal is restored even if the main thread is stuck
        }, "infertop-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        installSnapshotSignal();
        try {
            metrics = ListenOption.start(options.listen()); // a taken port: one line, exit 2, no probe attached
            if (metrics != null) {
                err.println("infertop: serving metrics at http://" + metrics.address() + "/metrics");
            }
            Integer pid = options.pid();
            if (pid == null && options.command().isEmpty()) {
                err.println("infertop: waiting for a process named " + options.follow());
                pid = waitForProcess(options.follow(), -1);
                if (pid == null) {
                    return 130;
                }
            }
            while (true) {
                SessionEnd end = traceOnce(btf, pid);
                throwLiveFailure();
                if (end.state() == dev.infertop.model.RunState.EXITED && options.follow() != null && !stopping) {
                    notice("infertop: pid " + pid + " exited; waiting for a process named " + options.follow());
                    LiveSession view = live;
                    if (view != null) {
                        view.monitor.following(options.follow());
                    }
                    Integer next = waitForProcess(options.follow(), pid);
                    if (next == null) {
                        throwLiveFailure();
                        return 0;
                    }
                    pid = next;
                    continue;
                }
                LiveSession view = live;
                if (view != null && !stopping && end.state() != dev.infertop.model.RunState.STOPPED) {
                    view.awaitQuit(); // the target is gone: its last screen stays until q
                    throwLiveFailure();
                }
                return end.status();
            }
        } finally {
            closeLive();
            if (metrics != null) {
                metrics.close();
            }
            if (targetLog != null) {
                targetLog.close();
            }
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it closes (idempotently) and lets the JVM exit
            }
        }
    }

    /** --user, sudo's caller, or null (infertop's own user); a bad user ends the run here, before any probe. */
    private LaunchedCommand.RunAs chooseLaunchUser() {
        LaunchUser choice = LaunchUser.choose(options.user(), System.getenv(), dev.infertop.ffi.UserDatabase.realUid(),
                dev.infertop.ffi.LibC.geteuid(), LaunchUser.Directory.SYSTEM);
        if (choice.account().isEmpty()) {
            return null;
        }
        Path setpriv = dev.infertop.target.Setpriv.find().orElseThrow(() -> new UserError("running the command as "
                + choice.account().get().name() + " needs setpriv (util-linux), which is not installed; "
                + "install it, or give --user root", 2));
        launchUserNote = choice.note();
        return new LaunchedCommand.RunAs(choice.account().get(), setpriv);
    }

    /**
     * The launched command's user must be able to run its executable and read its llama.cpp libraries: checked
     * as that user before anything is attached, so a private directory (root's home is often 0700) is one line.
     */
    private void requireUsableByLaunchUser(Path executable, List<Path> libraries) {
        if (runAs == null) {
            return;
        }
        try {
            java.util.Optional<Path> unusable = dev.infertop.target.Setpriv.firstUnusable(runAs.setpriv(),
                    runAs.user(), List.of(executable), libraries.stream().filter(Files::isRegularFile).toList());
            if (unusable.isPresent()) {
                throw new UserError(runAs.user().name() + " cannot " + (unusable.get().equals(executable)
                        ? "run " : "read ") + unusable.get() + " (a directory above it may be private, like /root): "
                        + "put it where " + runAs.user().name() + " can reach it, or give --user root", 2);
            }
        } catch (IOException e) {
            throw new UserError("cannot run the command as " + runAs.user().name() + ": " + e.getMessage(), 2);
        }
    }

    /** Stop everything: the collector, the live view, a wait for a process to follow. Any thread. */
    private void stop() {
        stopping = true;
        Resources resources = current;
        if (resources != null) {
            resources.stopCollector();
            // The kernel takes ~100 ms per uprobe to unregister: start now, while the collector drains what is
            // in the ring and freezes its final snapshot.
            resources.detachInBackground();
        }
        LiveSession view = live;
        if (view != null) {
            view.monitor.requestQuit();
        }
    }

    private void throwLiveFailure() {
        LiveSession view = live;
        Throwable failure = view == null ? null : view.monitor.failure();
        if (failure != null) {
            closeLive();
            throw new IllegalStateException("live view failed: " + failure, failure);
        }
    }

    private void closeLive() {
        LiveSession view = live;
        if (view != null) {
            view.close();
        }
    }

    /** A message for the user: on stderr, or in the live view's status line while the screen is up. */
    private void notice(String text) {
        LiveSession view = live;
        if (view == null || !view.notice(text, stopping)) {
            err.println(text);
        }
    }

    /**
     * Polls /proc until a process whose comm is {@code name} (cut to 15 bytes, as the kernel keeps it) and
     * whose pid is not {@code excludePid} appears; null when infertop is stopped first.
     */
    private Integer waitForProcess(String name, int excludePid) {
        FollowFilter filter = followFilter(name);
        long self = ProcessHandle.current().pid();
        while (!stopping) {
            try (java.util.stream.Stream<Path> entries = Files.list(Path.of("/proc"))) {
                for (Path entry : (Iterable<Path>) entries::iterator) {
                    String file = entry.getFileName().toString();
                    if (!file.chars().allMatch(Character::isDigit)) {
                        continue;
                    }
                    int pid = Integer.parseInt(file);
                    if (pid == excludePid || pid == self) {
                        continue;
                    }
                    try {
                        String comm = Files.readString(entry.resolve("comm")).strip();
                        java.util.Optional<dev.infertop.target.ProcessUids> uids =
                                dev.infertop.target.ProcessUids.of(pid);
                        switch (filter.verdict(comm, uids)) {
                            case FOLLOW -> {
                                return pid;
                            }
                            case OTHER_USER -> filter.skipNote(pid, uids.get()).ifPresent(this::notice);
                            case IGNORE -> { }
                        }
                    } catch (IOException gone) {
                        // exited while we looked
                    }
                }
            } catch (IOException e) {
                throw new UserError("cannot list /proc: " + e.getMessage());
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            LiveSession view = live;
            if (view != null && view.monitor.quitting()) {
                return null;
            }
        }
        return null;
    }

    /** One filter for the whole run: a skipped process of another user is said once, not at each restart. */
    private FollowFilter followFilter;

    private FollowFilter followFilter(String name) {
        if (followFilter == null) {
            followFilter = new FollowFilter(name, invoking, options.anyUser());
        }
        return followFilter;
    }

    private SessionEnd traceOnce(Path btf, Integer pid) {
        List<Path> candidates;
        TracedProcess process;
        if (pid != null) {
            process = attach(pid);
            candidates = librariesMappedBy(process.pid(), true);
            invoking.foreignProcessNote(pid, TracedProcess.commandName(pid), dev.infertop.target.ProcessUids.of(pid))
                    .ifPresent(this::notice);
        } else {
            java.util.Map<String, String> environment = new java.util.HashMap<>(System.getenv());
            environment.putAll(options.environment());
            LibraryResolver resolver = new LibraryResolver(environment);
            Path executable;
            ResolvedLibraries resolved;
            try {
                executable = resolver.findExecutable(options.command().getFirst());
                resolved = resolver.resolve(executable);
            } catch (TargetException e) {
                throw new UserError(e.getMessage());
            }
            candidates = new ArrayList<>(resolved.inferenceLibraries());
            candidates.add(resolved.executable());
            candidates.addAll(options.extraLibraries());
            requireInferenceCode(candidates, "command " + options.command().getFirst());
            requireUsableByLaunchUser(executable, resolved.inferenceLibraries());
            try {
                Path log = options.targetLog();
                if (log == null && options.output() == TraceOptions.OutputMode.LIVE) {
                    // The screen is the live view's: the command's output goes to a log.
                    Files.createDirectories(LlamaCppWorkload.cacheDir());
                    log = LlamaCppWorkload.cacheDir().resolve("target.log");
                    err.println("infertop: the command's output goes to " + log);
                }
                LaunchedCommand.Output route = log != null ? LaunchedCommand.Output.LOG_FILE
                        : options.output() == TraceOptions.OutputMode.JSON ? LaunchedCommand.Output.STDOUT_TO_STDERR
                        : LaunchedCommand.Output.INHERIT;
                if (launchUserNote != null) {
                    err.println(launchUserNote);
                }
                // Opened here without following links; the command's (root) gate shell appends through
                // /proc/PID/fd/N before it drops to the command's user.
                targetLog = log == null ? null : TargetLog.open(log);
                process = LaunchedCommand.start(executable, options.command().subList(1, options.command().size()),
                        options.environment(), route, targetLog == null ? null : Path.of(targetLog.procPath()), runAs);
            } catch (IOException e) {
                throw new UserError("cannot start " + options.command().getFirst() + ": " + e.getMessage());
            }
        }

        Resources resources = new Resources(process);
        current = resources;
        try {
            int ringBytes = options.ringKib() * 1024;
            Calibration calibration = calibrate(candidates, process.pid());
            var batch = dev.infertop.target.layout.BatchCalibrator.withDefaultCache().forTarget(candidates,
                    java.util.OptionalInt.of(process.pid()));
            batch.fallbackReason().ifPresent(why -> err.println("infertop: token layer: llama_batch read with "
                    + "llama.h's layout, each batch checked (" + why + ")"));
            resources.object = InfertopProbes.load(process.pid(), ringBytes, calibration.offsets(), btf,
                    moeConfig(calibration.layout()), batch.layout());
            BackendNames backendNames = BackendNames.load();
            dev.infertop.bpf.BackendOpsFilter.skipCpu(resources.object, backendNames);
            resources.probes = new ProbeSet(resources.object, process.pid());
            dev.infertop.bpf.PerfCounters perfCounters = new dev.infertop.bpf.PerfCounters(resources.object, counterSet);
            resources.probes.addSwitchable(Layer.COUNTERS, perfCounters);
            if (calibration.layout() == null) {
                resources.probes.markUnavailable(Layer.OPERATOR, calibration.problem());
            }
            if (InfertopProbes.schedUnavailableReason() != null && options.layers().contains(Layer.SCHED)) {
                resources.probes.markUnavailable(Layer.SCHED, InfertopProbes.schedUnavailableReason());
            }
            // Fused ops the graph shows need no probe on their calls (a trap per fused call per thread saved).
            dev.infertop.agg.FusionPatterns fusion = calibration.layout() == null ? null
                    : new dev.infertop.agg.FusionPatterns(calibration.layout().ops());
            if (fusion != null) {
                resources.probes.inferFusedCalls(fusion::learn);
            }
            resources.probes.setOperatorEvery(options.operatorEvery());
            resources.probes.setOperatorThreads(options.operatorThreads());
            java.util.Set<Layer> wantedLayers = java.util.EnumSet.copyOf(options.layers());
            for (Layer layer : java.util.List.copyOf(wantedLayers)) {
                layer.requires().filter(required -> !wantedLayers.contains(required)).ifPresent(required -> {
                    notice("infertop: the " + layer.id() + " layer " + layer.whyRequired() + ": switching the "
                            + required.id() + " layer on too");
                    wantedLayers.add(required);
                });
            }
            for (Layer layer : wantedLayers) {
                if (layer == Layer.OPERATOR && options.operatorRule() != null) {
                    resources.probes.disable(layer, "--op-when '" + options.operatorRule().text()
                            + "' not evaluated yet");
                } else {
                    resources.probes.enable(layer);
                }
            }
            resources.probes.addLibraries(candidates).forEach(this::notice);
            if (resources.probes.attachedProbeCount() == 0) {
                throw new UserError("no probe could be attached: " + reasons(resources.probes.statuses()));
            }
            resources.ring = new RingBufferReader(resources.object.mapFd(InfertopProbes.RING_BUFFER_MAP), ringBytes);
            resources.lost = new PerCpuCounter(resources.object.mapFd(InfertopProbes.LOST_EVENTS_MAP));
            SessionState session = new SessionState(process, resources.probes, options.extraLibraries());
            resources.schedHits = new PerCpuCounter(resources.object.mapFd(InfertopProbes.SCHED_HITS_MAP));
            PerCpuCounter schedHits = resources.schedHits;
            int targetPid = process.pid();
            int nameOffset = calibration.offsets().tensorName();
            Pipeline pipeline = pipeline(calibration.layout(), backendNames, targetPid, schedHits::sum,
                    resources.probes.moePlans()::write, address ->
                            dev.infertop.target.TargetMemory.cString(targetPid, address + nameOffset, 64));
            session.followFusion(pipeline.aggregator().operators(), fusion);
            dev.infertop.model.CounterSet chosen = counterSet;
            perfCounters.listener(opened -> pipeline.counters().configure(chosen, opened));
            resources.dag = pipeline.dag();
            SnapshotView view = switch (options.output()) {
                case JSON -> new JsonLinesView(out);
                case BATCH -> new BatchTextView(out);
                case LIVE -> liveView();
                case QUIET -> (SnapshotView) snapshot -> { };
            };
            if (process instanceof LaunchedCommand) {
                // The target is held until release(): it waits, not races.
                warmUp(calibration, backendNames, session, resources.ring, resources.lost);
            }
            SnapshotTaker taker = new SnapshotTaker(view, pipeline.aggregator(), pipeline.names(), options.snapshot(),
                    this::notice, snapshotNumbers, new Version().getVersion()[0]);
            snapshots = taker;
            view = taker;
            if (metrics != null) {
                // Each tick's snapshot and the run's histogram buckets, copied here, are what scrapes read.
                view = new dev.infertop.metrics.MetricsFeed(view, metrics, pipeline.aggregator()::forEachRunHistogram,
                        System.currentTimeMillis(), this::notice);
            }
            resources.collector = new Collector(resources.ring, pipeline.aggregator(), pipeline.decoder(),
                    resources.lost::sum, view, session);
            currentSession = session;
            if (resources.stopRequested || stopping) {
                return new SessionEnd(dev.infertop.model.RunState.STOPPED, 130);
            }
            installLayerToggleSignal(session);
            process.release();
            notice("infertop: tracing pid " + process.pid() + " (" + session.target().command() + "): "
                    + resources.probes.attachedProbeCount() + " probes attached; layers "
                    + String.join(", ", resources.probes.statuses().stream()
                            .map(l -> l.layer().id() + " " + l.state().label()).toList()));
            dev.infertop.model.RunState state = resources.collector.run(Math.round(intervalSeconds * 1e9), options.iterations());
            if (stopping) {
                closeLive(); // q or a signal: the screen goes at once; what follows is said on stderr
            }
            // Detach (begun at the stop) before anything else: what remains (the DAG file, snapshots being
            // written) works from copies.
            boolean stoppedByUs = process.isAlive(); // -n reached, q: close() stops it, not the command's status
            resources.close();
            if (options.dagFile() != null) {
                notice("infertop: " + DagExport.write(resources.dag, options.dagFile()));
            }
            finishSnapshots(taker);
            if (!stoppedByUs && process instanceof LaunchedCommand launched) {
                return new SessionEnd(state, launched.exitStatus().orElse(0));
            }
            return new SessionEnd(state, 0);
        } catch (BpfException e) {
            throw new UserError(e.getMessage());
        } catch (IOException e) {
            throw new UserError(e.getMessage());
        } finally {
            resources.close();
            currentSession = null;
            SnapshotTaker taker = snapshots;
            if (taker != null && taker.pendingWrites() > 0) {
                taker.abandon(); // an error ended the session: no half-written snapshot stays behind
            }
        }
    }

    /** Lets the snapshots still being written finish (probes are detached), or gives them up after a grace. */
    private void finishSnapshots(SnapshotTaker taker) {
        if (!taker.finish(SNAPSHOT_GRACE_MS)) {
            taker.abandon();
        }
    }

    /**
     * The collector's side of the data path (decoder → aggregators), built the same way for tracing and for
     * the warm-up. {@code moePlans} writes MoE plans into BPF; {@code leafNames} reads a tensor name from the
     * target (the DAG's weights).
     */
    record Pipeline(NameTable names, TraceAggregator aggregator, EventDecoder decoder,
                            dev.infertop.agg.CounterAggregator counters, dev.infertop.agg.DagRecorder dag) {}

    static Pipeline pipeline(CalibratedLayout layout, BackendNames backendNames, int targetPid,
                                     java.util.function.LongSupplier schedHits,
                                     dev.infertop.agg.MoeAggregator.PlanWriter moePlans,
                                     java.util.function.LongFunction<String> leafNames) {
        NameTable names = new NameTable();
        OpNaming naming = layout != null ? new CalibratedOpNaming(layout) : null;
        TraceAggregator aggregator = new TraceAggregator(backendNames,
                naming == null ? null : new OperatorAggregator(naming, names),
                new SchedAggregator(targetPid, names, schedHits)).withNames(names);
        dev.infertop.agg.CounterAggregator counters = new dev.infertop.agg.CounterAggregator();
        aggregator.counters(counters);
        aggregator.withBackendOps(new dev.infertop.agg.BackendOpsAggregator(backendNames, naming));
        dev.infertop.agg.DagRecorder dag = null;
        if (naming != null) {
            aggregator.withMoe(new dev.infertop.agg.MoeAggregator(naming, names, moePlans));
            dag = new dev.infertop.agg.DagRecorder(naming, names, leafNames);
            aggregator.withDag(dag);
            java.util.OptionalInt mulMat = layout.ops().number("MUL_MAT");
            if (mulMat.isPresent() && targetPid > 0) {
                aggregator.withRoofline(new dev.infertop.agg.RooflineAggregator(mulMat.getAsInt(), layout.types(),
                        rooflineSource(layout, targetPid), dev.infertop.machine.CeilingCache.defaultLocation().best()
                        .map(dev.infertop.machine.MachineCeilings::roofs).orElse(null)));
            }
        }
        return new Pipeline(names, aggregator, new EventDecoder(aggregator, names), counters, dag);
    }

    /**
     * A MUL_MAT's first source as the target holds it: type and shape at the calibrated offsets, and whether it
     * is a model weight (llama.cpp names them "….weight"), read from its memory once per address.
     */
    private static dev.infertop.agg.RooflineAggregator.WeightSource rooflineSource(CalibratedLayout layout, int pid) {
        return address -> {
            dev.infertop.target.layout.TensorHeaders.Header header = dev.infertop.target.layout.TensorHeaders.read(
                    pid, address, layout.tensor(), layout.types());
            if (header == null) {
                return null;
            }
            String name = dev.infertop.target.TargetMemory.cString(pid, address + layout.tensor().nameOffset(),
                    layout.tensor().maxNameBytes());
            return new dev.infertop.agg.RooflineAggregator.Source(header, name != null && name.endsWith(".weight"));
        };
    }

    /**
     * Runs a throw-away pipeline over a synthetic decode stream (see {@link CollectorWarmup}) while the launched
     * target is still held, so the JIT compiles the collector's code now and not while the target runs.
     */
    private void warmUp(Calibration calibration, BackendNames backendNames, SessionState session,
                        RingBufferReader ring, PerCpuCounter lost) {
        Pipeline pipeline = pipeline(calibration.layout(), backendNames, 0, () -> 0,
                (signature, groups, idsTensors, layers) -> false, address -> "");
        SnapshotView sink = switch (options.output()) {
            case JSON -> new JsonLinesView(new PrintStream(java.io.OutputStream.nullOutputStream()));
            case BATCH -> new BatchTextView(new PrintStream(java.io.OutputStream.nullOutputStream()));
            case QUIET -> (SnapshotView) snapshot -> { };
            case LIVE -> dev.infertop.tui.OffscreenView.open(live.keys, Theme.fromEnvironment(System.getenv()));
        };
        dev.infertop.snapshot.SnapshotOptions keepOnly = new dev.infertop.snapshot.SnapshotOptions(
                options.snapshot().pathPattern(), 0, false, options.snapshot().flightSeconds());
        SnapshotTaker taker = new SnapshotTaker(sink, pipeline.aggregator(), pipeline.names(), keepOnly, text -> {},
                new AtomicInteger(), "warm-up");
        try (SyntheticDecodeStream stream = new SyntheticDecodeStream(pipeline.decoder(), calibration.layout(),
                backendNames.guidOf("CPU"), System.nanoTime())) {
            CollectorWarmup warmup = new CollectorWarmup(stream, session.target(), session.layers());
            new Collector(ring, pipeline.aggregator(), pipeline.decoder(), lost::sum, taker, warmup)
                    .run(CollectorWarmup.TICK_NS, CollectorWarmup.TICKS);
            CollectorWarmup.awaitJitIdle();
        } catch (RuntimeException e) {
            // Only a speed-up: tracing works without it. Say so, since it means the stream no longer matches.
            notice("infertop: warm-up skipped (" + e + ")");
        } finally {
            sink.close();
        }
    }

    /** The live view's snapshot hand-off; starts the full screen on first use. */
    private SnapshotView liveView() throws IOException {
        LiveSession view = live;
        if (view == null) {
            view = LiveSession.start(new LiveMonitor.Controls() {
                @Override
                public void quit() {
                    stop();
                }

                @Override
                public void toggle(Layer layer) {
                    SessionState session = currentSession;
                    if (session != null) {
                        session.toggles.add(layer);
                    }
                }

                @Override
                public void snapshot() {
                    requestSnapshot("key");
                }

                @Override
                public String writeDag() {
                    Resources resources = current;
                    if (resources == null) {
                        return "no DAG: no target traced";
                    }
                    return DagExport.write(resources.dag, DagExport.defaultFile(resources.process.pid()));
                }

                @Override
                public void setIntervalSeconds(double seconds) {
                    intervalSeconds = seconds;
                    Resources resources = current;
                    Collector collector = resources == null ? null : resources.collector;
                    if (collector != null) {
                        collector.setIntervalNs(Math.round(seconds * 1e9));
                    }
                }
            }, intervalSeconds, err);
            live = view;
        }
        return view.view;
    }

    /** The terminal, the snapshot hand-off and the UI thread of the full-screen view. */
    private static final class LiveSession {
        final TerminalSession terminal;
        final LiveView view;
        final LiveMonitor monitor;
        final KeyTable keys;
        final Thread thread;
        volatile boolean closed;

        /** Lines that came after q (where a snapshot went): printed on stderr once the screen is gone. */
        private final List<String> afterQuit = new ArrayList<>();
        private final PrintStream err;

        /**
         * Shows a message in the status line, or keeps it for stderr when the user is quitting (the screen is
         * about to go); false once the screen is closed (the caller prints it).
         */
        synchronized boolean notice(String text, boolean quitting) {
            if (closed) {
                return false;
            }
            if (quitting) {
                afterQuit.add(text);
            } else {
                monitor.notice(text.startsWith("infertop: ") ? text.substring(10) : text);
            }
            return true;
        }

        private LiveSession(TerminalSession terminal, LiveView view, LiveMonitor monitor, KeyTable keys,
                            PrintStream err) {
            this.err = err;
            this.terminal = terminal;
            this.view = view;
            this.monitor = monitor;
            this.keys = keys;
            this.thread = Thread.ofPlatform().name("infertop-ui").daemon().unstarted(monitor);
        }

        static LiveSession start(LiveMonitor.Controls controls, double refreshSeconds, PrintStream err)
                throws IOException {
            KeyTable keys;
            try {
                keys = KeyTable.load();
            } catch (IllegalArgumentException e) {
                throw new UserError(e.getMessage());
            }
            TerminalSession terminal = TerminalSession.open();
            LiveView view = new LiveView();
            LiveMonitor monitor = new LiveMonitor(terminal, view, keys, Theme.fromEnvironment(System.getenv()),
                    controls, refreshSeconds);
            LiveSession session = new LiveSession(terminal, view, monitor, keys, err);
            session.thread.start();
            return session;
        }

        void awaitQuit() {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            monitor.requestQuit();
            if (Thread.currentThread() != thread) {
                try {
                    thread.join(500); // let it finish a frame before the screen goes away
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            terminal.close();
            afterQuit.forEach(err::println);
            afterQuit.clear();
        }
    }

    /** SIGUSR1 writes a snapshot directory at the next tick. */
    @SuppressWarnings("removal")
    private void installSnapshotSignal() {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("USR1"), signal -> requestSnapshot("SIGUSR1"));
        } catch (IllegalArgumentException e) {
            // no SIGUSR1 here (or the JVM keeps it): the live view's key and the options still work
        }
    }

    private void requestSnapshot(String trigger) {
        SnapshotTaker taker = snapshots;
        if (taker != null) {
            taker.request(trigger);
        }
    }

    /** SIGUSR2 switches the operator layer off and on, live (applied at the next interval). */
    @SuppressWarnings("removal")
    private static void installLayerToggleSignal(SessionState session) {
        try {
            sun.misc.Signal.handle(new sun.misc.Signal("USR2"), signal -> session.toggles.add(Layer.OPERATOR));
        } catch (IllegalArgumentException e) {
            // no SIGUSR2 on this platform: the live view's key still works
        }
    }

    /** What the MoE probes need to plan graphs themselves; none without a calibrated layout. */
    private static InfertopProbes.MoeConfig moeConfig(CalibratedLayout layout) {
        if (layout == null || layout.ops().number("MUL_MAT_ID").isEmpty()) {
            return InfertopProbes.MoeConfig.NONE;
        }
        return new InfertopProbes.MoeConfig(layout.ops().number("MUL_MAT_ID").getAsInt(), layout.computeFlag(),
                layout.emptyOps());
    }

    /** Struct offsets and op names for the operator layer, or why it cannot run. */
    private record Calibration(InfertopProbes.StructOffsets offsets, CalibratedLayout layout, String problem) {}

    /**
     * Finds the target's ggml core among the candidates and calibrates struct layouts against it (cached by
     * build-id): libggml-base, or libggml in releases before ggml's backend split (b3995 and older), which had
     * no libggml-base. Without either the operator layer is unavailable; the token and graph layers run
     * regardless. Calibrating runs the library's code: in a child process as the target's user (or nobody),
     * never in this one (see LayoutCalibrator). Done whatever --layers says: the graph layer reads n_nodes at
     * the calibrated offset, and the operator layer can be switched on live.
     */
    private Calibration calibrate(List<Path> candidates, int targetPid) {
        Path base = candidates.stream()
                .filter(p -> p.getFileName().toString().startsWith("libggml-base"))
                .findFirst()
                .or(() -> candidates.stream().filter(p -> p.getFileName().toString().startsWith("libggml."))
                        .findFirst())
                .orElse(null);
        if (base == null) {
            return new Calibration(UNCALIBRATED, null, "no libggml-base (or, before the backend split, libggml) "
                    + "among the target's libraries to calibrate struct layouts against");
        }
        try {
            CalibratedLayout layout = LayoutCalibrator.withDefaultCache().calibrate(base,
                    java.util.OptionalInt.of(targetPid));
            TensorLayout tensor = layout.tensor();
            GraphLayout graph = layout.graph();
            return new Calibration(new InfertopProbes.StructOffsets(graph.nodeCountOffset(), graph.nodesOffset(),
                    tensor.typeOffset(), tensor.neOffset(), tensor.opOffset(), tensor.opParamsOffset(),
                    tensor.flagsOffset(), tensor.srcOffset(), tensor.nameOffset(), tensor.dataOffset(),
                    tensor.nbOffset()), layout, "");
        } catch (CalibrationException e) {
            return new Calibration(UNCALIBRATED, null, e.getMessage());
        }
    }

    private static TracedProcess attach(int pid) {
        try {
            return AttachedProcess.of(pid);
        } catch (TargetException e) {
            throw new UserError(e.getMessage());
        }
    }

    private List<Path> librariesMappedBy(int pid, boolean required) {
        Set<Path> libraries = new LinkedHashSet<>();
        List<MemoryMapping> mapped;
        try {
            ProcessMaps maps = ProcessMaps.of(pid);
            if (maps.truncated()) {
                notice(maps.truncationNote());
            }
            mapped = maps.mappedLibraries();
        } catch (TargetException e) {
            throw new UserError(e.getMessage());
        }
        for (MemoryMapping mapping : mapped) {
            if (isInferenceLibrary(mapping.path())) {
                libraries.add(Path.of(mapping.path()));
            }
        }
        if (!mapped.isEmpty()) {
            libraries.add(Path.of(mapped.getFirst().path())); // the executable: llama.cpp may be linked in
        }
        libraries.addAll(options.extraLibraries());
        if (required) {
            requireInferenceCode(new ArrayList<>(libraries),
                    "process " + pid + " (" + TracedProcess.commandName(pid) + ")");
        }
        return new ArrayList<>(libraries);
    }

    static boolean isInferenceLibrary(String path) {
        String name = Path.of(path).getFileName().toString();
        return name.startsWith("libllama") || name.startsWith("libggml");
    }

    /** Fails with one line unless some candidate file defines a probed symbol. */
    private void requireInferenceCode(List<Path> candidates, String what) {
        for (Path library : options.extraLibraries()) { // checked even when another candidate has the code
            if (!Files.isRegularFile(library)) {
                throw new UserError("--lib " + library + ": no such file");
            }
        }
        for (Path candidate : candidates) {
            if (!Files.isRegularFile(candidate)) {
                if (options.extraLibraries().contains(candidate)) {
                    throw new UserError("--lib " + candidate + ": no such file");
                }
                continue;
            }
            if (isInferenceLibrary(candidate.toString())) {
                return;
            }
            try (ElfFile elf = ElfFile.open(candidate)) {
                if (elf.function("llama_decode").isPresent() || elf.function("ggml_graph_compute").isPresent()) {
                    return;
                }
            } catch (TargetException e) {
                if (options.extraLibraries().contains(candidate)) {
                    throw new UserError("--lib " + candidate + ": " + e.getMessage());
                }
            }
        }
        throw new UserError(what + " uses no llama.cpp/ggml library (libllama*, libggml*): "
                + "is it a llama.cpp program? Name the library with --lib PATH");
    }

    private static String reasons(List<LayerStatus> statuses) {
        return String.join("; ", statuses.stream().filter(s -> !s.reason().isEmpty())
                .map(s -> s.layer().id() + ": " + s.reason()).toList());
    }

    /** Per-tick bookkeeping: late-loaded libraries, model file, layer states. */
    private final class SessionState implements Collector.Session {
        private final TracedProcess process;
        private final ProbeSet probes;
        private final List<Path> extraLibraries;
        private TargetInfo target;

        SessionState(TracedProcess process, ProbeSet probes, List<Path> extraLibraries) {
            this.process = process;
            this.probes = probes;
            this.extraLibraries = extraLibraries;
            this.target = new TargetInfo(process.pid(), commandLabel(), null, List.of());
        }

        private String commandLabel() {
            if (options.command().isEmpty()) {
                return TracedProcess.commandName(process.pid());
            }
            return Path.of(options.command().getFirst()).getFileName().toString();
        }

        /** Layers to switch at the next tick (SIGUSR2 toggles the operator layer). */
        final java.util.concurrent.ConcurrentLinkedQueue<Layer> toggles = new java.util.concurrent.ConcurrentLinkedQueue<>();
        private int ruleDwell;
        private boolean ruleEvaluated;

        /**
         * Until the model file shows up in the target's maps, look as soon as probes report (the model is
         * loaded before the first llama_decode) and every 50 ms in the first seconds, not once per interval: a
         * short run (llama-bench on a tiny model takes ~70 ms) may end before the first interval. See
         * {@link MapsDrainScans}.
         */
        @Override
        public boolean startingUp() {
            return target.modelFile() == null && !modelSearchOver;
        }

        private dev.infertop.agg.OperatorAggregator operators;

        /** Keeps {@code operators} told whether the fused-op calls are probed (see {@link #syncFusedCalls}). */
        void followFusion(dev.infertop.agg.OperatorAggregator operators, dev.infertop.agg.FusionPatterns fusion) {
            if (operators != null && fusion != null) {
                this.operators = operators;
                operators.fusion(fusion, !probes.fusedCallsInferred());
            }
        }

        /**
         * The operator layer infers fused groups while the fused-op calls are not probed; a library found later
         * can leave them unprobed, the MoE layer or a fusion that failed its barrier counts has them probed.
         */
        private void syncFusedCalls() {
            if (operators == null) {
                return;
            }
            if (operators.fusedCallsNeeded()) {
                try {
                    probes.requireFusedCalls();
                    notice("infertop: a graph's fused ops were not the ones its nodes suggest (barrier counts differ):"
                            + " probing the fused-op calls from now on");
                } catch (BpfException e) {
                    notice("infertop: cannot probe the fused-op calls: " + e.getMessage());
                }
            }
            operators.fusedCallsProbed(!probes.fusedCallsInferred());
        }

        @Override
        public void onDrain(long nowNs, int records) {
            syncFusedCalls();
            if (!startingUp()) {
                return;
            }
            if (records > 0 && firstRecordsNs == 0) {
                firstRecordsNs = nowNs;
            }
            if (firstRecordsNs != 0 && nowNs - firstRecordsNs > MODEL_SEARCH_NS) {
                // Records flow but no .gguf is mapped: the model was read, not mapped (llama.cpp's --no-mmap).
                // Looking on every drain would cost a /proc/PID/maps read every 10 ms for the whole run.
                modelSearchOver = true;
                dev.infertop.ffi.LibC.niceThisProcess(OWN_NICE); // start-up is over all the same (see rescan)
                return;
            }
            if (drainScans.due(nowNs, records)) {
                rescan();
            }
        }

        private final MapsDrainScans drainScans = new MapsDrainScans();

        /** How long after the first records the model file is looked for on every drain. */
        private static final long MODEL_SEARCH_NS = 2_000_000_000L;
        private long firstRecordsNs;
        private boolean modelSearchOver;

        @Override
        public void onTick(dev.infertop.model.Snapshot previous) {
            applyLayerSwitches(previous);
            // Libraries dlopen'ed late and the model file show up in the maps; once the model is known, a look
            // every few intervals is enough (reading /proc/PID/maps is most of a tick's work).
            if (target.modelFile() == null || ++ticksSinceScan >= MAPS_SCAN_EVERY_TICKS) {
                ticksSinceScan = 0;
                rescan();
            }
        }

        private static final int MAPS_SCAN_EVERY_TICKS = 5;
        private boolean mapsTruncationNoted;
        private int ticksSinceScan;

        private void rescan() {
            drainScans.scanned(System.nanoTime());
            ProcessMaps maps;
            try {
                maps = ProcessMaps.of(process.pid());
            } catch (TargetException e) {
                return; // gone: the collector notices on its own
            }
            if (maps.truncated() && !mapsTruncationNoted) {
                mapsTruncationNoted = true;
                notice(maps.truncationNote());
            }
            List<Path> libraries = new ArrayList<>();
            String model = target.modelFile();
            for (MemoryMapping mapping : maps.mappings()) {
                String path = mapping.path();
                if (path == null || path.isEmpty()) {
                    continue;
                }
                if (path.endsWith(".gguf")) {
                    model = path;
                } else if (mapping.isExecutable() && isInferenceLibrary(path) && !mapping.deleted()) {
                    libraries.add(Path.of(path));
                }
            }
            try {
                probes.addLibraries(libraries).forEach(TraceRun.this::notice);
            } catch (BpfException e) {
                notice("infertop: " + e.getMessage());
            }
            if (target.modelFile() == null && model != null) {
                // Start-up is over (the target mapped its model): from here on infertop's own threads run at
                // nice 10, yielding the CPU to the workload; the ring buffer absorbs the delay. Not before, so
                // a run of a few milliseconds is still followed closely.
                dev.infertop.ffi.LibC.niceThisProcess(OWN_NICE);
            }
            target = new TargetInfo(process.pid(), commandLabel(), model,
                    libraries.stream().map(Path::toString).distinct().toList());
        }

        private void applyLayerSwitches(dev.infertop.model.Snapshot previous) {
            try {
                Layer toggle;
                while ((toggle = toggles.poll()) != null) {
                    if (probes.isEnabled(toggle)) {
                        probes.disable(toggle, "switched off live");
                    } else {
                        probes.enable(toggle);
                        java.util.Optional<Layer> required = toggle.requires();
                        if (required.isPresent() && !probes.isEnabled(required.get())) {
                            probes.enable(required.get());
                            notice("infertop: " + required.get().id() + " layer on (the " + toggle.id()
                                    + " layer needs it)");
                        }
                    }
                    notice("infertop: " + toggle.id() + " layer " + (probes.isEnabled(toggle) ? "on" : "off")
                            + "; " + probes.attachedProbeCount() + " probes attached");
                }
                OperatorRule rule = options.operatorRule();
                if (rule != null && previous != null && ++ruleDwell >= OperatorRule.MIN_DWELL_INTERVALS) {
                    boolean holds = rule.holds(previous);
                    if (holds != probes.isEnabled(Layer.OPERATOR)) {
                        ruleDwell = 0;
                        if (holds) {
                            probes.enable(Layer.OPERATOR);
                        } else {
                            probes.disable(Layer.OPERATOR, "--op-when '" + rule.text() + "' does not hold");
                        }
                    } else if (!holds && !ruleEvaluated) {
                        // Off from the start and still off: the reason must stop saying "not evaluated yet".
                        probes.disable(Layer.OPERATOR, "--op-when '" + rule.text() + "' does not hold");
                    }
                    ruleEvaluated = true;
                }
            } catch (BpfException e) {
                notice("infertop: " + e.getMessage());
            }
        }

        @Override
        public TargetInfo target() {
            return target;
        }

        @Override
        public List<LayerStatus> layers() {
            return probes.statuses();
        }

        @Override
        public boolean targetAlive() {
            return process.isAlive();
        }
    }

    /** Everything to release, in reverse order of acquisition; idempotent and callable from the hook. */
    private static final class Resources {
        final TracedProcess process;
        BpfObject object;
        ProbeSet probes;
        RingBufferReader ring;
        PerCpuCounter lost;
        PerCpuCounter schedHits;
        volatile Collector collector;
        volatile dev.infertop.agg.DagRecorder dag;
        volatile boolean stopRequested;
        private boolean closed;
        private final Object detachLock = new Object();
        private final java.util.concurrent.atomic.AtomicBoolean detaching = new java.util.concurrent.atomic.AtomicBoolean();
        private final CountDownLatch detached = new CountDownLatch(1);

        Resources(TracedProcess process) {
            this.process = process;
        }

        void stopCollector() {
            stopRequested = true;
            Collector current = collector;
            if (current != null) {
                current.requestStop();
            }
        }

        synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            detach();
            if (probes != null) {
                probes.close(); // idempotent: also what was attached after an early detach from the hook
            }
            if (ring != null) {
                ring.close();
            }
            if (lost != null) {
                lost.close();
            }
            if (schedHits != null) {
                schedHits.close();
            }
            if (object != null) {
                object.close();
            }
            process.close();
        }

        /** Every probe and perf event off the target (the ring and maps stay: the reader may still drain). */
        private void detach() {
            synchronized (detachLock) {
                if (probes != null) {
                    probes.close();
                }
                detached.countDown();
            }
        }

        /** Waits until the probes are off; whether they are. */
        boolean awaitDetached(long timeoutMs) {
            try {
                return detached.await(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        /**
         * Detaches from another thread, waiting at most {@code timeoutMs}: a main thread stuck while holding the
         * probe set must not hold the exit too (the kernel drops the rest with infertop's file descriptors).
         */
        void detachWithin(long timeoutMs) {
            detachInBackground();
            awaitDetached(timeoutMs);
        }

        /** Starts detaching on a thread of its own (once); {@link #close} waits for it. */
        void detachInBackground() {
            if (!detaching.compareAndSet(false, true)) {
                return;
            }
            Thread.ofPlatform().name("infertop-detach").daemon().start(this::detach);
        }
    }
}
