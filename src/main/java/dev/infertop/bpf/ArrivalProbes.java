package dev.infertop.bpf;

import dev.infertop.process.MemoryMapping;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The operator layer's per-thread probes (the node loop's barrier calls and fused-op calls): one trap per worker
 * thread per node group, nearly all of the layer's cost. Between the overhead budget's sample windows they are
 * detached (a detached probe costs nothing; one that returns early still costs its trap) and re-attached at the
 * same sites, found once, without scanning the libraries again. Guarded by the probe set's lock, which
 * {@link OperatorKernelSide} holds.
 */
final class ArrivalProbes {
    /**
     * A site found and attached by the layer; {@code link} (which may hold other sites of its program and library
     * too) is null while the windows keep it detached.
     */
    static final class Site {
        final String program;
        final Path library;
        /** The file the target mapped, re-attached by it (null: not known). */
        final MemoryMapping mappedAs;
        final long fileOffset;
        ProbeLink link;

        Site(String program, Path library, MemoryMapping mappedAs, long fileOffset, ProbeLink link) {
            this.program = program;
            this.library = library;
            this.mappedAs = mappedAs;
            this.fileOffset = fileOffset;
            this.link = link;
        }
    }

    private final List<Site> sites = new ArrayList<>();
    private boolean paused;

    /** Whether {@code program} is one of these: the programs a sample window switches. */
    static boolean isArrivalProgram(String program) {
        return program.equals("handle_node_done") || program.equals(ProbeSpec.FUSED_CALL_PROGRAM)
                || program.equals(ProbeSpec.NODE_DISPATCH_PROGRAM);
    }

    void attached(String program, Path library, MemoryMapping mappedAs, long fileOffset, ProbeLink link) {
        sites.add(new Site(program, library, mappedAs, fileOffset, link));
    }

    boolean paused() {
        return paused;
    }

    /** Marks them paused and hands over their links, to be removed from the layer's and closed. */
    List<ProbeLink> pause() {
        paused = true;
        List<ProbeLink> links = new ArrayList<>();
        for (Site site : sites) {
            if (site.link != null) {
                if (links.stream().noneMatch(link -> link == site.link)) { // an uprobe-multi link holds many sites
                    links.add(site.link);
                }
                site.link = null;
            }
        }
        return links;
    }

    /** The sites to attach again (paused: none of them has a link). */
    List<Site> detachedSites() {
        return sites.stream().filter(site -> site.link == null).toList();
    }

    void resumed() {
        paused = false;
    }

    /** The layer was detached or attached anew: its sites are found again, and start attached. */
    void forget() {
        sites.clear();
        paused = false;
    }
}
