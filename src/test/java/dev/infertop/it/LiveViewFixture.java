package dev.infertop.it;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What the live-view tests share: everything tracing needs, tmux and the launcher, checked once per class; the
 * tiny model's llama-bench as the target; and the test's {@link TmuxPane}, killed after each test whatever its
 * outcome, so that no infertop outlives a failed test.
 */
abstract class LiveViewFixture {
    static Path bench;
    static Path tinyModel;
    /** The pane the running test opened, or null. */
    TmuxPane pane;

    @BeforeAll
    static void liveViewRequirements() {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
        TmuxPane.require();
    }

    @AfterEach
    void killPane() throws Exception {
        if (pane != null) {
            pane.close();
        }
    }

    /**
     * Opens {@link #pane}: {@code infertop OPTIONS -- llama-bench} in a {@code columns} x 30 pane that keeps its
     * size, the bench running 32 prompt and 32 generated tokens on 2 threads, {@code repetitions} times.
     */
    void startOnBench(String session, int columns, int repetitions, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of(options));
        args.addAll(List.of("--", bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0",
                "-pg", "32,32", "-r", Integer.toString(repetitions), "-t", "2"));
        pane = TmuxPane.start(session, columns, 30, args.toArray(String[]::new));
        pane.keepSize();
    }
}
