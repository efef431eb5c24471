package dev.infertop.cli;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Two sides run in turns, for commands that compare them on one machine ({@code overhead}: without and with
 * infertop; {@code diff --turns}: two command lines): interleaved pairs whose order alternates (A B, B A, A B, …),
 * so that a slow drift of the machine reaches both sides alike, after warm-up pairs that are run and not counted
 * (page cache, CPU frequency, infertop's own start-up caches). And the command line that runs infertop itself on a
 * command, as src/scripts/infertop would, so that what is measured is what users run.
 */
final class Turns {
    private Turns() {}

    /** One run of one side; {@code pair} is negative for a warm-up pair. */
    interface Turn<R> {
        R run(boolean second, int pair) throws Exception;
    }

    /** The runs counted, each side's in the order run. */
    record Runs<R>(List<R> first, List<R> second) {}

    static <R> Runs<R> alternate(int pairs, int warmup, Turn<R> turn) throws Exception {
        List<R> first = new ArrayList<>();
        List<R> second = new ArrayList<>();
        for (int pair = -warmup; pair < pairs; pair++) {
            // The order alternates each pair so that a drift of the machine does not favour one side.
            boolean secondFirst = Math.floorMod(pair, 2) == 1;
            for (int half = 0; half < 2; half++) {
                boolean isSecond = secondFirst == (half == 0);
                R run = turn.run(isSecond, pair);
                if (pair >= 0) {
                    (isSecond ? second : first).add(run);
                }
            }
        }
        return new Runs<>(first, second);
    }

    /** {@code java [launcher's JVM options] -jar infertop.jar ARGS -- COMMAND}: this infertop, as users start it. */
    static List<String> infertopOn(List<String> args, List<String> command) {
        String jar;
        try {
            jar = Path.of(Turns.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException("infertop's own jar has no path: " + e.getMessage(), e);
        }
        List<String> argv = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
        argv.addAll(JvmOptions.forLauncher()); // what src/scripts/infertop runs
        argv.add("-jar");
        argv.add(jar);
        argv.addAll(args);
        argv.add("--");
        argv.addAll(command);
        return argv;
    }
}
