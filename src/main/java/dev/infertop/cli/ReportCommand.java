package dev.infertop.cli;

import dev.infertop.json.SafeJson;
import dev.infertop.session.UserError;
import dev.infertop.snapshot.SnapshotDirectory;
import dev.infertop.snapshot.SnapshotReadException;
import dev.infertop.snapshot.SnapshotReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code infertop report DIR [--json]}: a snapshot directory's statistics, offline. */
@Command(name = "report", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Print a snapshot directory's statistics: across tokens (TTFT, TPOT, tokens/s), per op type",
                "(wall time, percentiles from latency.hlog), across experts. A damaged or foreign directory is",
                "refused with the bad file's name."})
final class ReportCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DIR", description = "A snapshot directory (s, SIGUSR1, --snapshot-*).")
    Path directory;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() {
        SnapshotDirectory snapshot = open(directory);
        if (json) {
            System.out.println(SafeJson.line(SnapshotReport.json(snapshot)));
        } else {
            SnapshotReport.printText(snapshot, System.out);
        }
        return 0;
    }

    static SnapshotDirectory open(Path directory) {
        try {
            return SnapshotDirectory.open(directory);
        } catch (SnapshotReadException e) {
            throw new UserError(e.getMessage());
        }
    }
}
