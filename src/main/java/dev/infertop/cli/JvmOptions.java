package dev.infertop.cli;

import java.util.List;

/**
 * The JVM options infertop runs with, in one place: src/scripts/infertop passes exactly these (a unit test
 * compares them), and {@code infertop overhead} starts its traced runs with them, so the cost it measures is
 * the cost users get. On a 2-core box llama.cpp spins both cores: every thread and wake-up infertop adds is
 * taken from it, so the JVM is kept to the fewest threads and the least background work.
 */
public final class JvmOptions {
    private JvmOptions() {}

    private static final List<String> LAUNCHER = List.of(
            "--enable-native-access=ALL-UNNAMED",
            // One GC thread and no concurrent GC work; the heap is small and short pauses do not matter here.
            "-XX:+UseSerialGC",
            // C1 only: the hot paths are simple loops; C2 would spend seconds of CPU compiling them again.
            "-XX:TieredStopAtLevel=1",
            // One compiler thread: compilation happens at start-up, it need not compete for both cores.
            "-XX:CICompilerCount=1",
            // (Not -XX:CompileThresholdScaling=10: it cut C1's CPU before the first screen, but the collector then
            // ran interpreted for seconds where events come fast and lost many more records (measurements.md,
            // "JVM options tried and not adopted"); per-method thresholds for infertop's and HdrHistogram's code did
            // not help, the hot path runs through the JDK's memory-segment code.)
            // (Not -XX:+UnlockDiagnosticVMOptions -XX:AsyncDeflationInterval=0, which stops the monitor-deflation
            // thread's wake-ups every 250 ms: the collector's and the compiler's CPU rose by more than it saved;
            // measurements.md.)
            // No hsperfdata file in /tmp updated by the JVM every tick (and no jstat attach point).
            "-XX:-UsePerfData",
            // A bounded heap, sized to the collector's bounds (memory grows with what the target chooses only up
            // to them; JSON "limits"): the flight recorder up to ~20 MB (grown by chunks, as its window needs); tensor names at
            // most NameTable.MAX_NAMES (32 Ki, ~10 MB); tensor groups at most OperatorAggregator.
            // MAX_TENSOR_GROUPS (320 x ~80 KB of histograms, ~26 MB); MoE tables at most MoeAggregator.MAX_LAYERS
            // (128) x 1024 experts (~30 MB with a snapshot's copies); op names at most OpNames.MAX_OP_NAMES (128,
            // each with its histograms); threads at most ThreadSlots.MAX_THREADS (256 x ~25 KB: activity strip and
            // sched stretches, ~6 MB); backends, interferers, contexts and MoE plans a few hundred KB at their
            // caps; node tables the rest.
            // A heap much nearer the live set made the collector spend its time in GC at a few thousand graphs a second.
            "-Xms32m",
            "-Xmx160m",
            // A 6 MB young generation (the default third of -Xms is 10.7 MB): every page of it is resident after
            // the first collection, and the collector's garbage dies young: a lower peak RSS for a few more minor
            // collections (measurements.md, "Resident memory").
            "-Xmn6m",
            // (Not -XX:+ExitOnOutOfMemoryError: the JVM would exit without its shutdown hooks, leaving a launched
            // command running and the live view's terminal raw. An OutOfMemoryError, like any Error, ends infertop
            // through its own exit path instead: probes detached, terminal restored, one line, status 70;
            // session.FatalErrors.)
            // The JVM's own warnings (an AOT cache refused, say) on stderr, never on stdout where JSON goes.
            // (-Xshare:auto, the default, is not spelled out: the JVM refuses it beside -XX:AOTCache.)
            "-Xlog:disable",
            "-Xlog:all=warning:stderr");

    /** The options before {@code -jar}, in order. */
    public static List<String> forLauncher() {
        return LAUNCHER;
    }
}
