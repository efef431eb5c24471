package dev.infertop.session;

import dev.infertop.metrics.ListenAddress;
import dev.infertop.metrics.WebConfig;
import dev.infertop.snapshot.SnapshotOptions;
import dev.infertop.model.Layer;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** What to trace and how to show it, as parsed from the command line. */
public record TraceOptions(
        Integer pid,
        List<String> command,
        List<Path> extraLibraries,
        OutputMode output,
        double delaySeconds,
        long iterations,
        Set<Layer> layers,
        Path btf,
        int ringKib,
        Map<String, String> environment,
        Path targetLog,
        int operatorEvery,
        double budgetPercent,
        OperatorRule operatorRule,
        List<Integer> operatorThreads,
        String follow,
        String counters,
        SnapshotOptions snapshot,
        Path dagFile,
        ListenAddress listen,
        WebConfig webConfig,
        String user,
        boolean anyUser,
        int opSampleHz) {

    /** The clock sampler's period per CPU for {@link #opSampleHz}, 0 for none. */
    public long opSamplePeriodNs() {
        return opSampleHz <= 0 ? 0 : 1_000_000_000L / opSampleHz;
    }

    /**
     * BATCH and JSON for scripts; LIVE is the full-screen view (stdout a terminal, no option given); QUIET
     * prints nothing per interval (a headless exporter with {@code listen}).
     */
    public enum OutputMode { BATCH, JSON, LIVE, QUIET }

    public TraceOptions {
        command = List.copyOf(command);
        extraLibraries = List.copyOf(extraLibraries);
        environment = Map.copyOf(environment);
        operatorThreads = List.copyOf(operatorThreads);
        layers = layers.isEmpty() ? EnumSet.noneOf(Layer.class) : EnumSet.copyOf(layers);
    }

    public void validate() {
        boolean hasPid = pid != null;
        boolean hasCommand = !command.isEmpty();
        if (follow != null) {
            if (hasCommand) {
                throw new UserError("--follow waits for a process by name: use it with -p PID or alone, "
                        + "not with -- COMMAND", 2);
            }
            if (follow.isBlank() || follow.contains("/")) {
                throw new UserError("--follow takes a process name (its comm, as in ps -o comm), got '"
                        + follow + "'", 2);
            }
        } else if (hasPid == hasCommand) {
            throw new UserError(hasPid
                    ? "give either -p PID or -- COMMAND, not both"
                    : "nothing to trace: give -p PID, or -- COMMAND [ARGS...] (see infertop --help)", 2);
        }
        if (user != null && !hasCommand) {
            throw new UserError("--user runs the launched command as USER: use it with -- COMMAND "
                    + "(-p and --follow trace processes already running)", 2);
        }
        if (anyUser && follow == null) {
            throw new UserError("--any-user lets --follow NAME pick other users' processes: use it with --follow "
                    + "(-p PID traces any user's process)", 2);
        }
        if (!(delaySeconds >= 0.05) || delaySeconds > 3600) {
            throw new UserError("-d must be between 0.05 and 3600 seconds, got " + delaySeconds, 2);
        }
        if (iterations < 0) {
            throw new UserError("-n must be 0 (no limit) or more, got " + iterations, 2);
        }
        if (ringKib < 16 || Integer.bitCount(ringKib) != 1 || ringKib > 1 << 20) {
            throw new UserError("--ring-kib must be a power of two from 16 to 1048576, got " + ringKib, 2);
        }
        if (layers.isEmpty()) {
            throw new UserError("--layers names no layer: give at least one of token, graph, operator, moe, sched, counters", 2);
        }
        if (operatorEvery < 1) {
            throw new UserError("--op-every must be 1 or more, got " + operatorEvery, 2);
        }
        if (opSampleHz < 0 || opSampleHz > 10_000) {
            throw new UserError("--op-sample-hz must be from 0 (no sampler) to 10000, got " + opSampleHz, 2);
        }
        if (!(budgetPercent >= 0 && budgetPercent <= 100)) {
            throw new UserError("--budget must be a percentage from 0 (no limit) to 100, got " + budgetPercent, 2);
        }
        String snapshotProblem = snapshot.problem();
        if (snapshotProblem != null) {
            throw new UserError(snapshotProblem, 2);
        }
        if (dagFile != null) {
            DagOption.validate(dagFile, layers);
        }
    }
}
