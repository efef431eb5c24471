package dev.infertop.session;

import dev.infertop.agg.FusionPatterns;
import dev.infertop.bpf.BpfObject;
import dev.infertop.bpf.GraphStartMaps;
import dev.infertop.bpf.PerCpuCounter;
import dev.infertop.bpf.PerfCounters;
import dev.infertop.bpf.ProbeSet;
import dev.infertop.bpf.RingBufferReader;
import dev.infertop.model.BackendNames;

/**
 * What the load stage hands forward, and owns: the BPF object, the probe set over it (nothing attached yet), the
 * ring and the maps the session reads, and what the later stages need to know of the load. Closed once, in
 * reverse order of acquisition ({@link #close}); the probes alone may be detached earlier, from another thread.
 */
final class LoadedProbes implements AutoCloseable {
    final BpfObject object;
    final ProbeSet probes;
    final RingBufferReader ring;
    final PerCpuCounter lost;
    final PerCpuCounter schedHits;
    final GraphStartMaps graphStarts;
    final BackendNames backendNames;
    final PerfCounters perfCounters;
    /** Null when the operator layer has no layout to read graphs with. */
    final FusionPatterns fusion;

    LoadedProbes(BpfObject object, ProbeSet probes, RingBufferReader ring, PerCpuCounter lost, PerCpuCounter schedHits,
                 GraphStartMaps graphStarts, BackendNames backendNames, PerfCounters perfCounters,
                 FusionPatterns fusion) {
        this.object = object;
        this.probes = probes;
        this.ring = ring;
        this.lost = lost;
        this.schedHits = schedHits;
        this.graphStarts = graphStarts;
        this.backendNames = backendNames;
        this.perfCounters = perfCounters;
        this.fusion = fusion;
    }

    /** Every probe off the target (idempotent): the ring and maps stay, so the reader may still drain. */
    void detach() {
        probes.close();
    }

    @Override
    public void close() {
        probes.close();
        StopTimeline.mark("probes detached", System.err);
        ring.close();
        lost.close();
        schedHits.close();
        graphStarts.close();
        object.close();
        StopTimeline.mark("BPF object closed", System.err);
    }
}
