package dev.infertop.session;

import dev.infertop.agg.FusionPatterns;
import dev.infertop.bpf.BackendOpsFilter;
import dev.infertop.bpf.BpfException;
import dev.infertop.bpf.BpfObject;
import dev.infertop.bpf.GraphNames;
import dev.infertop.bpf.GraphStartMaps;
import dev.infertop.bpf.InfertopProbes;
import dev.infertop.bpf.OperatorKernelSide;
import dev.infertop.bpf.PerCpuCounter;
import dev.infertop.bpf.PerfCounters;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.bpf.RingBufferReader;
import dev.infertop.bpf.SiteFinder;
import dev.infertop.ffi.LibC;
import dev.infertop.io.ConfigFiles;
import dev.infertop.model.BackendNames;
import dev.infertop.model.CounterSet;
import dev.infertop.model.Layer;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The load stage: the BPF object loaded with the calibrated offsets, the probe set over it, the ring and maps the
 * session reads, and what each layer cannot do on this target (no layout for the operator layer, no tracepoints
 * for sched). Nothing is attached yet. It returns the owner of all of it; on a failure it releases what it took.
 */
final class ProbeLoader {
    private ProbeLoader() {}

    static LoadedProbes load(TraceOptions options, int pid, Calibration calibration, Path btf, CounterSet counterSet,
                             SiteFinder sites) throws BpfException {
        BpfObject object = InfertopProbes.load(pid, options.ringKib() * 1024, calibration.offsets(), btf,
                calibration.moeConfig(), calibration.batch(), calibration.graphTokensConfig());
        List<AutoCloseable> taken = new ArrayList<>(List.of(object));
        try {
            GraphNames.write(object, ConfigFiles.graphRuntimes());
            LibC.trimNativeHeap(); // libbpf freed its copy of the kernel's BTF: out of the RSS too
            BackendNames backendNames = ConfigFiles.backendNames();
            BackendOpsFilter.skipCpu(object, backendNames);
            ProbeSet probes = new ProbeSet(object, pid, sites);
            taken.add(probes);
            PerfCounters perfCounters = new PerfCounters(object, counterSet);
            probes.addSwitchable(Layer.COUNTERS, perfCounters);
            if (calibration.layout() == null) {
                probes.markUnavailable(Layer.OPERATOR, calibration.problem());
            }
            if (InfertopProbes.schedUnavailableReason() != null && options.layers().contains(Layer.SCHED)) {
                probes.markUnavailable(Layer.SCHED, InfertopProbes.schedUnavailableReason());
            }
            // Fused ops the graph shows need no probe on their calls (a trap per fused call per thread saved).
            FusionPatterns fusion = calibration.layout() == null ? null : new FusionPatterns(calibration.layout().ops());
            OperatorKernelSide operator = probes.kernelSide(Layer.OPERATOR, OperatorKernelSide.class);
            if (fusion != null) {
                operator.inferFusedCalls(fusion::learn);
            }
            operator.setEvery(options.operatorEvery());
            operator.samplePeriodNs(options.opSamplePeriodNs());
            operator.setThreads(options.operatorThreads());
            RingBufferReader ring = new RingBufferReader(object.mapFd(InfertopProbes.RING_BUFFER_MAP),
                    options.ringKib() * 1024);
            taken.add(ring);
            PerCpuCounter lost = new PerCpuCounter(object.mapFd(InfertopProbes.LOST_EVENTS_MAP));
            taken.add(lost);
            PerCpuCounter schedHits = new PerCpuCounter(object.mapFd(InfertopProbes.SCHED_HITS_MAP));
            taken.add(schedHits);
            GraphStartMaps graphStarts = new GraphStartMaps(object);
            taken.add(graphStarts);
            return new LoadedProbes(object, probes, ring, lost, schedHits, graphStarts, backendNames, perfCounters,
                    fusion);
        } catch (BpfException | RuntimeException | Error e) {
            for (AutoCloseable resource : taken.reversed()) {
                try {
                    resource.close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }
}
