package dev.infertop.session;

import dev.infertop.ffi.OwnPriority;
import dev.infertop.model.BudgetStatus;
import dev.infertop.process.LaunchedCommand;
import dev.infertop.agg.Collector;
import dev.infertop.agg.FusionPatterns;
import dev.infertop.agg.OperatorAggregator;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.OperatorKernelSide;
import dev.infertop.bpf.ProbeLayer;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.process.MemoryMapping;
import dev.infertop.process.ProcessMaps;
import dev.infertop.process.TargetException;
import dev.infertop.process.TracedProcess;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The poll stage's per-tick and per-drain policy, as the collector's {@link Collector.Session}: libraries
 * loaded late and the model file (from the target's maps), layer switches (keys, SIGUSR2, --op-when), and the
 * fused-call state passed from the operator aggregator to the probes and back.
 */
final class TickPolicy implements Collector.Session {
    private final RunControl control;
    private final TracedProcess process;
    private final ProbeSet probes;
    private TargetInfo target;

    TickPolicy(RunControl control, TracedProcess process, ProbeSet probes) {
        this.control = control;
        this.process = process;
        this.probes = probes;
        this.lostRecords = new LostRecordsNotice(control.options.ringKib(), control.options.budgetPercent());
        this.target = new TargetInfo(process.pid(), commandLabel(), null, List.of());
    }

    private String commandLabel() {
        if (control.options.command().isEmpty()
                || (process instanceof LaunchedCommand launched && launched.following())) {
            return TracedProcess.commandName(process.pid()); // -p, --follow, or the engine a launcher started
        }
        return Path.of(control.options.command().getFirst()).getFileName().toString();
    }

    /** Layers to switch at the next tick (SIGUSR2 toggles the operator layer). */
    final ConcurrentLinkedQueue<Layer> toggles = new ConcurrentLinkedQueue<>();
    private int ruleDwell;
    private boolean ruleEvaluated;

    /**
     * Until the model file shows up in the target's maps, look as soon as probes report (the model is
     * loaded before the first llama_decode) and every 50 ms in the first seconds, not once per interval: a
     * short run (llama-bench on a tiny model) may end before the first interval. See
     * {@link MapsDrainScans}.
     */
    @Override
    public boolean startingUp() {
        return target.modelFile() == null && !modelSearchOver;
    }

    private OperatorAggregator operators;

    /** The operator layer's fused-call policy, which the probe set keeps with that layer. */
    private OperatorKernelSide operatorSide() {
        return probes.kernelSide(Layer.OPERATOR, OperatorKernelSide.class);
    }

    /** Keeps {@code operators} told whether the fused-op calls are probed (see {@link #syncFusedCalls}). */
    void followFusion(OperatorAggregator operators, FusionPatterns fusion) {
        if (operators != null && fusion != null) {
            this.operators = operators;
            operators.fusion(fusion, !operatorSide().fusedCallsInferred());
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
                operatorSide().requireFusedCalls();
                control.notice("infertop: a graph's fused ops were not the ones its nodes suggest (barrier counts differ):"
                        + " probing the fused-op calls from now on");
            } catch (BpfException e) {
                control.notice("infertop: cannot probe the fused-op calls: " + e.getMessage());
            }
        }
        operators.fusedCallsProbed(!operatorSide().fusedCallsInferred());
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
            OwnPriority.targetStarted(); // the model is not mapped; started all the same (see rescan)
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

    private final NativeHeapTrim trim = new NativeHeapTrim(System.nanoTime());

    /** Nothing, unless a test set INFERTOP_TEST_INJECT. */
    private final InjectedFault injected = InjectedFault.fromEnvironment();

    @Override
    public void onTick(Snapshot previous) {
        injected.onTick();
        applyLayerSwitches(previous);
        noteLostRecords(previous);
        trim.onTick(System.nanoTime());
        // Libraries dlopen'ed late and the model file show up in the maps; once the model is known, a look
        // every few intervals is enough (reading /proc/PID/maps is most of a tick's work).
        if (target.modelFile() == null || ++ticksSinceScan >= MAPS_SCAN_EVERY_TICKS) {
            ticksSinceScan = 0;
            rescan();
        }
    }

    /** Records lost after the last tick (the run's last half-second, say) are said too. */
    @Override
    public void onFinal(Snapshot last) {
        noteLostRecords(last);
    }

    private void noteLostRecords(Snapshot snapshot) {
        String lost = snapshot == null ? null : lostRecords.check(snapshot.lostEvents());
        if (lost != null) {
            control.notice(lost);
        }
    }

    private static final int MAPS_SCAN_EVERY_TICKS = 5;
    private final LostRecordsNotice lostRecords;
    private boolean mapsTruncationNoted;
    private int ticksSinceScan;
    /**
     * The SHA-256 of the maps as the last look read them (null before the first): a digest, not the bytes, which the
     * target can make 16 MiB long; a cryptographic one, as the target chooses the paths in them.
     */
    private byte[] lastMapsDigest;

    private static byte[] sha256(byte[] bytes) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JDK has SHA-256
        }
    }

    private void rescan() {
        drainScans.scanned(System.nanoTime());
        ProcessMaps maps;
        try {
            byte[] bytes = ProcessMaps.read(process.pid());
            byte[] digest = sha256(bytes);
            if (java.util.Arrays.equals(digest, lastMapsDigest)) {
                // Nothing mapped or unmapped since: the same libraries and model. Parsing the lines and looking at
                // every mapped file again (two stats each) was most of a look that found nothing new.
                return;
            }
            maps = ProcessMaps.of(process.pid(), bytes);
            lastMapsDigest = digest;
        } catch (TargetException e) {
            return; // gone: the collector notices on its own
        }
        if (maps.truncated() && !mapsTruncationNoted) {
            mapsTruncationNoted = true;
            control.notice(maps.truncationNote());
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
            } else if (mapping.isExecutable() && TargetOpener.isInferenceLibrary(path) && !mapping.deleted()) {
                libraries.add(Path.of(path));
            }
        }
        try {
            probes.addLibraries(libraries).forEach(control::notice);
        } catch (BpfException e) {
            lastMapsDigest = null; // the next look tries these libraries again, changed maps or not
            control.notice("infertop: " + e.getMessage());
        }
        if (target.modelFile() == null && model != null) {
            // The target has started (it mapped its model): from here on (and the first screen on, see
            // OwnPriority) infertop's own threads run at nice 10, yielding the CPU to the workload; the ring
            // buffer absorbs the delay. Not before, so a run of a few milliseconds is still followed closely.
            OwnPriority.targetStarted();
        }
        target = new TargetInfo(process.pid(), commandLabel(), model,
                libraries.stream().map(Path::toString).distinct().toList());
    }

    private void applyLayerSwitches(Snapshot previous) {
        boolean operatorWasOn = probes.isEnabled(Layer.OPERATOR);
        try {
            Layer toggle;
            while ((toggle = toggles.poll()) != null) {
                if (probes.isEnabled(toggle)) {
                    probes.disable(toggle, "switched off live");
                } else {
                    probes.enable(toggle);
                    Layer needed = ProbeLayer.of(toggle).needs();
                    if (needed != null && !probes.isEnabled(needed)) {
                        probes.enable(needed);
                        control.notice("infertop: " + needed.id() + " layer on (the " + toggle.id() + " layer needs it)");
                    }
                }
                control.notice("infertop: " + toggle.id() + " layer " + (probes.isEnabled(toggle) ? "on" : "off")
                        + "; " + probes.attachedProbeCount() + " probes attached");
            }
            OperatorRule rule = control.options.operatorRule();
            OverheadBudget watching = budget;
            if (rule != null && previous != null && ++ruleDwell >= OperatorRule.MIN_DWELL_INTERVALS
                    && (watching == null || !watching.failed())) { // a failed budget keeps the layer off
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
            control.notice("infertop: " + e.getMessage());
        }
        OverheadBudget running = budget;
        if (running != null && probes.isEnabled(Layer.OPERATOR) != operatorWasOn) {
            running.operatorSwitched();
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

    /** The overhead budget, once started (before: none). */
    volatile OverheadBudget budget;

    @Override
    public BudgetStatus budget() {
        OverheadBudget running = budget;
        return running == null ? BudgetStatus.NONE : running.status();
    }

    @Override
    public boolean targetAlive() {
        return process.isAlive();
    }
}
