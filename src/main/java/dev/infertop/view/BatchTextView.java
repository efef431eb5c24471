package dev.infertop.view;

import dev.infertop.ffi.PipeEnd;
import dev.infertop.model.CounterTotals;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.Figures;
import dev.infertop.model.LatencySummary;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.SchedTotals;
import dev.infertop.model.SafeText;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TokenTotals;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** A plain-text block per interval, like {@code top -b}; the final block shows the run's totals. */
public final class BatchTextView implements SnapshotView {
    private final PrintStream out;
    private final PipeEnd stdoutPipe;

    public BatchTextView(PrintStream out) {
        this.out = out;
        this.stdoutPipe = out == System.out ? PipeEnd.standardOutput() : null;
    }

    @Override
    public void show(Snapshot snapshot) {
        out.print(SafeText.lines(render(snapshot))); // the guard: target text is already made visible where it enters
        out.flush();
    }

    /**
     * PrintStream turns EPIPE into its error flag (the JVM ignores SIGPIPE): a closed pipe reads as true after a
     * write; on standard output, poll(2) tells it before the next one (the collector asks between intervals).
     */
    @Override
    public boolean outputClosed() {
        return out.checkError() || (stdoutPipe != null && stdoutPipe.readerGone());
    }

    public static String render(Snapshot s) {
        boolean total = s.isFinal();
        Figures f = s.shown();
        TokenTotals tokens = f.tokens();
        long spanNs = f.spanNs();
        StringBuilder text = new StringBuilder();
        text.append(String.format(Locale.ROOT, "infertop — pid %d %s%s — %s %.2f s — %s%n",
                s.target().pid(), s.target().command(),
                s.target().modelFile() == null ? "" : " — model " + s.target().modelFile(),
                total ? "TOTAL over" : "interval", spanNs / 1e9, s.state().text()));
        text.append(String.format(Locale.ROOT, "  layers    %s   lost events %d%n", layers(s.layers()), s.lostEvents()));
        text.append(String.format(Locale.ROOT,
                "  tokens    prefill %7d tok %10.1f tok/s   decode %7d tok %9.1f tok/s   calls %d (%d failed)%n",
                tokens.tokensPrefill(), tokens.prefillTokensPerSecond(), tokens.tokensDecode(),
                tokens.decodeTokensPerSecond(), tokens.decodeCalls(), tokens.failedCalls()));
        text.append("  latency   TTFT ").append(latency(f.ttft()))
                .append("   TPOT ").append(latency(f.tpot())).append('\n');
        List<BackendTotals> backends = f.backends();
        if (backends.isEmpty()) {
            text.append("  graphs    none computed\n");
        }
        for (BackendTotals backend : backends) {
            text.append(String.format(Locale.ROOT, "  graphs    %-8s %6d computes %8d nodes %10.2f ms busy (%.0f%%)%n",
                    backend.backend(), backend.computes(), backend.nodes(), backend.busyNs() / 1e6,
                    100 * backend.busyFraction(spanNs)));
        }
        BackendTotals cpu = f.cpuGraphs();
        if (cpu.computes() > 0) {
            text.append(String.format(Locale.ROOT, "  cpu path  ggml_graph_compute %6d calls %8d nodes %10.2f ms%n",
                    cpu.computes(), cpu.nodes(), cpu.busyNs() / 1e6));
        }
        SchedTotals sched = f.sched();
        if (!sched.threads().isEmpty()) {
            String thief = SchedPanel.worstLabel(s);
            text.append(String.format(Locale.ROOT, "  sched     running %.1f ms  runnable %.1f ms  sleeping %.1f ms%s%n",
                    sched.runningNs() / 1e6, sched.runnableNs() / 1e6, sched.sleepingNs() / 1e6,
                    thief.isEmpty() ? "" : "  " + thief));
        }
        CounterTotals counters = f.counters();
        if (counters != null && !counters.isEmpty()) {
            StringBuilder values = new StringBuilder();
            for (int e = 0; e < counters.events().size(); e++) {
                values.append(' ').append(counters.events().get(e)).append(' ').append(counters.value(e));
            }
            text.append(String.format(Locale.ROOT, "  counters  %s:%s   %d groups (%d migrated)%s%n",
                    counters.setName(), values, counters.countedGroups(), counters.migratedGroups(),
                    counters.refillsIndex() < 0 ? "" : String.format(Locale.ROOT, "   L3 refill %.1f MB/s",
                            counters.refillBytesPerSecond(spanNs) / 1e6)));
        }
        text.append('\n');
        return text.toString();
    }

    private static String latency(LatencySummary latency) {
        if (latency.count() == 0) {
            return "—";
        }
        return String.format(Locale.ROOT, "p50 %.3f ms p99 %.3f ms (n=%d)", latency.p50Ms(), latency.p99Ms(),
                latency.count());
    }

    private static String layers(List<LayerStatus> layers) {
        return layers.stream().map(l -> l.layer().id() + " " + l.state().label()
                        + (l.reason().isEmpty() ? "" : " (" + l.reason() + ")"))
                .collect(Collectors.joining(", "));
    }
}
