package dev.infertop.cli;

import dev.infertop.model.Layer;
import dev.infertop.model.Snapshot;
import dev.infertop.session.UserError;
import dev.infertop.snapshot.SnapshotDirectory;
import dev.infertop.snapshot.SummarySnapshot;
import dev.infertop.tui.KeyTable;
import dev.infertop.tui.LiveMonitor;
import dev.infertop.tui.LiveView;
import dev.infertop.tui.TerminalSession;
import dev.infertop.view.Theme;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code infertop replay DIR}: the live view on a saved snapshot, with a frozen clock: the run's totals as the
 * summary holds them, navigable (sort, filter, latency plots from the hlog) as in a live session.
 */
@Command(name = "replay", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Open the live view on a snapshot directory (frozen: the run's totals as saved).",
                "Keys as in the live view; layer switches and snapshots do nothing here."})
final class ReplayCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DIR", description = "A snapshot directory (s, SIGUSR1, --snapshot-*).")
    Path directory;

    @Override
    public Integer call() throws IOException {
        SnapshotDirectory snapshot = ReportCommand.open(directory);
        Snapshot frozen = SummarySnapshot.of(snapshot);
        if (!InfertopCommand.onTerminal()) {
            throw new UserError("replay needs a terminal (for a script: infertop report " + directory + " --json)");
        }
        KeyTable keys;
        try {
            keys = KeyTable.load();
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
        try (TerminalSession terminal = TerminalSession.open()) {
            Thread restore = new Thread(terminal::close, "infertop-replay-shutdown");
            Runtime.getRuntime().addShutdownHook(restore); // SIGINT, SIGTERM, SIGHUP: the terminal comes back
            LiveView view = new LiveView();
            LiveMonitor[] monitor = new LiveMonitor[1];
            monitor[0] = new LiveMonitor(terminal, view, keys, Theme.fromEnvironment(System.getenv()),
                    new LiveMonitor.Controls() {
                        @Override
                        public void quit() {
                            monitor[0].requestQuit();
                        }

                        @Override
                        public void toggle(Layer layer) {
                            monitor[0].notice("replay of " + directory + ": layers are as recorded");
                        }

                        @Override
                        public void setIntervalSeconds(double seconds) {
                            // frozen clock: nothing to refresh
                        }

                        @Override
                        public void snapshot() {
                            monitor[0].notice("replay of " + directory + ": this is a snapshot already");
                        }
                    }, 1.0);
            view.show(frozen);
            monitor[0].notice("replay of " + directory);
            monitor[0].run();
            if (monitor[0].failure() != null) {
                throw new IllegalStateException("live view failed: " + monitor[0].failure(), monitor[0].failure());
            }
        }
        return 0;
    }
}
