package dev.infertop.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.ffi.UprobeMultiSupport;
import dev.infertop.machine.CeilingCache;
import dev.infertop.machine.CeilingMeasurement;
import dev.infertop.machine.MachineCeilings;
import dev.infertop.machine.UprobeCostProbe;
import dev.infertop.machine.UprobeHitCost;
import dev.infertop.session.UserError;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code infertop machine}: this machine's roofline ceilings (memory read bandwidth, FMA throughput), measured
 * once and cached, so that an op's GB/s and GFLOP/s can be held against them.
 */
@Command(name = "machine", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Print this machine's roofline ceilings: sustained memory read bandwidth and f32 FMA",
                "throughput, measured once (about 10 s, the machine should be otherwise idle) and cached;",
                "and what one uprobe hit costs (under a second; the overhead budget uses it)."})
final class MachineCommand implements Callable<Integer> {
    @Option(names = {"-t", "--threads"}, paramLabel = "N",
            description = "Threads to measure with: the target's thread count (default: every online CPU).")
    Integer threads;

    @Option(names = "--measure", description = "Measure again even if cached ceilings exist.")
    boolean measure;

    @Option(names = "--json", description = "Print the ceilings as one JSON object.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        int n = threads != null ? threads : Runtime.getRuntime().availableProcessors();
        if (n < 1 || n > 1024) {
            throw new UserError("--threads " + n + ": give 1 to 1024", 2);
        }
        CeilingCache cache = CeilingCache.defaultLocation();
        Optional<MachineCeilings> cached = measure ? Optional.empty() : cache.lookup(n);
        MachineCeilings ceilings;
        if (cached.isPresent()) {
            ceilings = cached.get();
        } else {
            System.err.println("infertop: measuring memory read bandwidth and FMA throughput on " + n
                    + " threads (about 10 s; other work on the machine lowers the figures)");
            try {
                ceilings = CeilingMeasurement.measure(n);
            } catch (IOException e) {
                throw new UserError("cannot measure this machine's ceilings: " + e.getMessage());
            }
            try {
                cache.store(ceilings);
            } catch (IOException e) {
                System.err.println("infertop: cannot cache the ceilings in " + cache.fileFor(n) + ": " + e.getMessage());
            }
        }
        Optional<UprobeHitCost> hit = measure ? Optional.empty() : cache.uprobeCost();
        if (hit.isEmpty()) {
            try {
                hit = Optional.of(UprobeCostProbe.measure());
                cache.store(hit.get());
            } catch (IOException e) {
                System.err.println("infertop: cannot measure what a uprobe hit costs here: " + e.getMessage());
            }
        }
        if (json) {
            ObjectMapper mapper = new ObjectMapper();
            com.fasterxml.jackson.databind.node.ObjectNode node = mapper.valueToTree(ceilings);
            hit.ifPresent(cost -> node.set("uprobe_hit", mapper.valueToTree(cost)));
            node.put("uprobe_links", UprobeMultiSupport.available() ? "uprobe_multi" : "perf_event");
            System.out.println(mapper.writeValueAsString(node));
        } else {
            System.out.println(ceilings.describe() + hit.map(cost -> "\n" + cost.describe()).orElse("")
                    + "\n" + UprobeMultiSupport.verdict().line()
                    + (cached.isPresent() ? "\n(cached in " + cache.fileFor(n).getParent()
                    + "; --measure to measure again)" : ""));
        }
        return 0;
    }
}
