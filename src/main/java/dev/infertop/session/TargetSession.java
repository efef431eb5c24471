package dev.infertop.session;

import dev.infertop.agg.Collector;
import dev.infertop.agg.OperatorAggregator;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.MoeKernelSide;
import dev.infertop.bpf.OperatorKernelSide;
import dev.infertop.bpf.SiteFinder;
import dev.infertop.metrics.MetricsServer;
import dev.infertop.model.CounterSet;
import dev.infertop.model.Layer;
import dev.infertop.model.Roofline;
import dev.infertop.model.RunState;
import dev.infertop.process.DeadlineReads;
import dev.infertop.process.LaunchedCommand;
import dev.infertop.process.TargetMemory;
import dev.infertop.process.TracedProcess;
import dev.infertop.process.layout.LayoutCache;
import dev.infertop.snapshot.SnapshotTaker;

import java.io.IOException;
import java.nio.file.Path;

/**
 * One traced process, start to finish, in libbpf-bootstrap's order: open (the target), configure (its struct
 * layouts), load (the BPF object), attach (the layers' probes), poll (the collector, until the target exits,
 * -n, q or a signal), clean up (in reverse, on every path: {@link #trace}'s one finally).
 */
final class TargetSession {
    /** How long snapshots still being written at the end may take (probes are detached by then). */
    static final long SNAPSHOT_GRACE_MS = 15_000;
    /** After a quit from the live view, a detach still running this long is said on stderr (the prompt waits). */
    static final long DETACH_SAID_AFTER_MS = 300;

    /**
     * The live view's first interval: its first screen of figures comes this soon after the probes attach, not
     * a whole -d later; the intervals after it are -d long. JSON and text output keep every interval -d long
     * (-n N is N intervals of -d). --op-when never judges this first interval (it waits two intervals).
     */
    static final long FIRST_LIVE_INTERVAL_NS = 250_000_000L;

    /** The first interval's length for this output, given -d's ({@code intervalNs}). */
    static long firstIntervalNs(TraceOptions.OutputMode output, long intervalNs) {
        return output == TraceOptions.OutputMode.LIVE ? Math.min(intervalNs, FIRST_LIVE_INTERVAL_NS) : intervalNs;
    }

    /** How the session ended: the collector's state and infertop's exit status. */
    record End(RunState state, int status) {}

    private final RunControl control;
    private final TargetOpener opener;
    private final Path btf;
    private final CounterSet counterSet;
    private final MetricsServer metrics;

    TargetSession(RunControl control, TargetOpener opener, Path btf, CounterSet counterSet, MetricsServer metrics) {
        this.control = control;
        this.opener = opener;
        this.btf = btf;
        this.counterSet = counterSet;
        this.metrics = metrics;
    }

    End trace(Integer pid) {
        TargetOpener.OpenedTarget target = opener.open(pid);
        TracedProcess process = target.process();
        StartTimeline.mark("target opened", control.err);
        SessionResources resources = new SessionResources(process);
        control.tracing(resources);
        try {
            // The probe sites are read (or taken from the cache) while the layouts are read and the BPF object
            // loads: neither needs them, and attaching waits only for what is not read yet.
            SiteFinder sites = SiteFinder.cachedIn(LayoutCache.defaultLocation().directory(), control::notice);
            sites.prefetch(target.candidates(), process.pid());
            Calibration calibration = Calibration.of(target.candidates(), process.pid(), control.err);
            StartTimeline.mark("layouts calibrated", control.err);
            LoadedProbes loaded = ProbeLoader.load(control.options, process.pid(), calibration, btf, counterSet, sites);
            resources.adopt(loaded);
            StartTimeline.mark("BPF object loaded", control.err);
            LayerStart.attach(control, loaded.probes, target.candidates());
            StartTimeline.mark("probes attached", control.err);
            return poll(resources, calibration, loaded);
        } catch (BpfException e) {
            throw new UserError(e.getMessage());
        } catch (IOException e) {
            throw new UserError(e.getMessage());
        } catch (Error e) {
            FatalErrors.releaseReserve(); // room for the clean-up below where the heap ran out
            throw e;
        } finally {
            resources.close();
            resources.policy = null;
            SnapshotTaker taker = resources.snapshots;
            if (taker != null && taker.pendingWrites() > 0) {
                taker.abandon(); // an error ended the session: no half-written snapshot stays behind
            }
        }
    }

    /** Wires the pipeline to the ring, releases the target, and runs the collector until the end. */
    private End poll(SessionResources resources, Calibration calibration, LoadedProbes loaded) throws IOException {
        TracedProcess process = resources.process;
        TickPolicy policy = new TickPolicy(control, process, loaded.probes);
        Pipeline pipeline = wire(process, calibration, loaded, policy);
        resources.dag = pipeline.dag();
        OutputChain output = OutputChain.build(control, pipeline, metrics);
        resources.snapshots = output.snapshots();
        if (process instanceof LaunchedCommand) {
            // The target is held until release(): it waits, not races.
            CollectorWarmup.run(control, calibration, loaded.backendNames, policy, loaded.ring, loaded.lost);
        }
        resources.collector = new Collector(loaded.ring, pipeline.aggregator(), pipeline.decoder(), loaded.lost::sum,
                output.head(), policy);
        resources.policy = policy;
        if (resources.stopRequested || control.stopping()) {
            return new End(RunState.STOPPED, 130);
        }
        release(resources, loaded, policy);
        long intervalNs = Math.round(control.intervalSeconds() * 1e9);
        resources.collector.setIntervalNs(intervalNs); // from the second interval on (or what +/- set since)
        RunState state = resources.collector.run(firstIntervalNs(control.options.output(), intervalNs),
                control.options.iterations());
        StopTimeline.begin("the collector ended: " + state, control.err);
        StopTimeline.mark("collector's final snapshot", control.err);
        return finish(resources, state, output.snapshots());
    }

    /** The aggregation pipeline over what the load stage made, and the parts of the probes that follow it. */
    private Pipeline wire(TracedProcess process, Calibration calibration, LoadedProbes loaded, TickPolicy policy) {
        int targetPid = process.pid();
        DeadlineReads.TARGET.notices(control::notice); // a read of its memory that stalls
        int nameOffset = calibration.offsets().tensorName();
        // The roofline's ceilings before the first screen (the operator layer costs the nodes it holds them against).
        Roofline.Ceilings ceilings = calibration.layout() == null
                || !control.options.layers().contains(Layer.OPERATOR) ? null
                : RooflineCeilings.atStart(process instanceof LaunchedCommand, control::notice);
        OperatorKernelSide operator = loaded.probes.kernelSide(Layer.OPERATOR, OperatorKernelSide.class);
        Pipeline pipeline = Pipeline.build(calibration.layout(), loaded.backendNames, targetPid,
                loaded.schedHits::sum, loaded.probes.kernelSide(Layer.MOE, MoeKernelSide.class).plans()::write,
                address -> TargetMemory.cString(targetPid, address + nameOffset, 64), ceilings,
                operator::samplingPeriodNs);
        pipeline.aggregator().withGraphsInFlight(loaded.graphStarts);
        operator.followGraphsInFlight(loaded.graphStarts);
        policy.followFusion(pipeline.aggregator().registered(OperatorAggregator.class), loaded.fusion);
        loaded.perfCounters.listener(opened -> pipeline.counters().configure(counterSet, opened));
        return pipeline;
    }

    /** The budget and the operator toggle start, and the held target goes: tracing from its first token. */
    private void release(SessionResources resources, LoadedProbes loaded, TickPolicy policy) throws IOException {
        TracedProcess process = resources.process;
        Signals.operatorToggleOnUsr2(policy);
        resources.budget = OverheadBudget.start(control.options.budgetPercent(), loaded.probes, loaded.object,
                process.pid(), control::notice);
        policy.budget = resources.budget;
        process.release();
        control.notice("infertop: tracing pid " + process.pid() + " (" + policy.target().command() + "): "
                + loaded.probes.attachedProbeCount() + " probes attached; layers "
                + String.join(", ", loaded.probes.statuses().stream()
                        .map(l -> l.layer().id() + " " + l.state().label()).toList()));
        StartTimeline.mark("collector ready", control.err);
    }

    /** After the collector: the screen goes, the probes come off, then the DAG file and the snapshots finish. */
    private End finish(SessionResources resources, RunState state, SnapshotTaker taker) {
        TracedProcess process = resources.process;
        if (control.stopping()) {
            boolean wasLive = control.live() != null;
            control.closeLive(); // q or a signal: the screen goes at once; what follows is said on stderr
            StopTimeline.mark("live view closed", control.err);
            if (wasLive && !resources.awaitDetached(DETACH_SAID_AFTER_MS)) {
                // The kernel unregisters perf-event uprobes one after another, a grace period each (~0.2 s
                // on a busy machine): the prompt comes back only then, so say what it waits for.
                control.err.println("infertop: detaching the probes from pid " + process.pid()
                        + " (the kernel removes one uprobe at a time)");
            }
        }
        // Detach (begun at the stop) before anything else: what remains (the DAG file, snapshots being
        // written) works from copies.
        boolean stoppedByUs = process.isAlive(); // -n reached, q: close() stops it, not the command's status
        resources.close();
        StopTimeline.mark("session resources closed", control.err);
        if (control.options.dagFile() != null) {
            control.notice("infertop: " + DagExport.write(resources.dag, control.options.dagFile(),
                    control.options.snapshot().access()));
        }
        if (!taker.finish(SNAPSHOT_GRACE_MS)) {
            taker.abandon(); // the snapshots still being written get a grace, then are given up
        }
        StopTimeline.mark("snapshots finished", control.err);
        if (!stoppedByUs && process instanceof LaunchedCommand launched) {
            return new End(state, launched.exitStatus().orElse(0));
        }
        return new End(state, 0);
    }
}
