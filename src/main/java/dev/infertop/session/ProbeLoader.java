package dev.infertop.session;

import dev.infertop.agg.FusionPatterns;
import dev.infertop.bpf.BackendOpsFilter;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.InfertopProbes;
import dev.infertop.bpf.OperatorKernelSide;
import dev.infertop.bpf.PerfCounters;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.bpf.SiteFinder;
import dev.infertop.model.BackendNames;
import dev.infertop.model.CounterSet;
import dev.infertop.model.Layer;

import java.nio.file.Path;

/**
 * The load stage: the BPF object loaded with the calibrated offsets, the probe set over it, and what each layer
 * cannot do on this target (no layout for the operator layer, no tracepoints for sched). Nothing is attached
 * yet; what is loaded is in {@code resources}, released by its close.
 */
final class ProbeLoader {
    private ProbeLoader() {}

    /** What the later stages need from loading: the backends' names, the counters layer, the fusion patterns. */
    record Loaded(BackendNames backendNames, PerfCounters perfCounters, FusionPatterns fusion) {}

    static Loaded load(RunControl control, SessionResources resources, Calibration calibration, Path btf,
                       CounterSet counterSet, SiteFinder sites) throws BpfException {
        TraceOptions options = control.options;
        resources.object = InfertopProbes.load(resources.process.pid(), options.ringKib() * 1024,
                calibration.offsets(), btf, calibration.moeConfig(), calibration.batch(),
                calibration.graphTokensConfig());
        dev.infertop.bpf.GraphNames.write(resources.object, dev.infertop.io.ConfigFiles.graphRuntimes());
        dev.infertop.ffi.LibC.trimNativeHeap(); // libbpf freed its copy of the kernel's BTF: out of the RSS too
        BackendNames backendNames = dev.infertop.io.ConfigFiles.backendNames();
        BackendOpsFilter.skipCpu(resources.object, backendNames);
        resources.probes = new ProbeSet(resources.object, resources.process.pid(), sites);
        PerfCounters perfCounters = new PerfCounters(resources.object, counterSet);
        resources.probes.addSwitchable(Layer.COUNTERS, perfCounters);
        if (calibration.layout() == null) {
            resources.probes.markUnavailable(Layer.OPERATOR, calibration.problem());
        }
        if (InfertopProbes.schedUnavailableReason() != null && options.layers().contains(Layer.SCHED)) {
            resources.probes.markUnavailable(Layer.SCHED, InfertopProbes.schedUnavailableReason());
        }
        // Fused ops the graph shows need no probe on their calls (a trap per fused call per thread saved).
        FusionPatterns fusion = calibration.layout() == null ? null : new FusionPatterns(calibration.layout().ops());
        OperatorKernelSide operator = resources.probes.kernelSide(Layer.OPERATOR, OperatorKernelSide.class);
        if (fusion != null) {
            operator.inferFusedCalls(fusion::learn);
        }
        operator.setEvery(options.operatorEvery());
        operator.samplePeriodNs(options.opSamplePeriodNs());
        operator.setThreads(options.operatorThreads());
        return new Loaded(backendNames, perfCounters, fusion);
    }
}
