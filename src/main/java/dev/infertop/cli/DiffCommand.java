package dev.infertop.cli;

import dev.infertop.diff.Change;
import dev.infertop.diff.DiffHtml;
import dev.infertop.diff.DiffInputException;
import dev.infertop.diff.DiffJson;
import dev.infertop.diff.DiffText;
import dev.infertop.diff.RunDiff;
import dev.infertop.diff.RunLoader;
import dev.infertop.diff.RunMetrics;
import dev.infertop.io.FileAccess;
import dev.infertop.io.OutputFiles;
import dev.infertop.session.UserError;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code infertop diff A B}: two runs compared per generated token (see dev.infertop.diff). Exit status 0, 1 when
 * {@code --fail-on} finds a significant regression beyond its percentage, 2 for a run that cannot be read or two
 * that have nothing to compare.
 */
@Command(name = "diff", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Compare two runs (snapshot directories or --json logs) per generated token: tokens/s, TTFT,",
                "TPOT, and per op type time per token, with a Mann-Whitney rank test over the runs' intervals.",
                "Exit 1 with --fail-on PCT on a significant regression beyond PCT %%; 2 on unreadable input."})
final class DiffCommand implements Callable<Integer> {
    /** Input that cannot be read, or two runs with nothing to compare. */
    static final int EXIT_BAD_INPUT = 2;
    static final int EXIT_REGRESSED = 1;

    @Parameters(index = "0", paramLabel = "A", description = "The baseline: a snapshot directory or a --json log.")
    Path a;

    @Parameters(index = "1", paramLabel = "B", description = "The run compared with it.")
    Path b;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    @Option(names = "--html", paramLabel = "FILE", description = "Also write a side-by-side HTML report to FILE.")
    Path html;

    @Option(names = "--fail-on", paramLabel = "PCT", description = "Exit 1 when the decode rate falls, or an op's time "
            + "per generated token rises, by more than PCT %% with significance.")
    Double failOnPercent;

    @Override
    public Integer call() {
        if (failOnPercent != null && !(failOnPercent >= 0 && failOnPercent < 1e6)) {
            throw new UserError("--fail-on takes a percentage of 0 or more, got " + failOnPercent, EXIT_BAD_INPUT);
        }
        RunDiff diff;
        try {
            diff = RunDiff.of(new RunMetrics(RunLoader.load(a)), new RunMetrics(RunLoader.load(b)));
        } catch (DiffInputException e) {
            throw new UserError(e.getMessage(), EXIT_BAD_INPUT);
        }
        if (html != null) {
            try {
                // Private, as a snapshot's report.html: it names the models and processes. Never through a link.
                String page = DiffHtml.html(diff);
                OutputFiles.replace(html, FileAccess.PRIVATE, out -> out.write(page.getBytes(StandardCharsets.UTF_8)));
            } catch (IOException e) {
                throw new UserError("cannot write " + html + ": " + e.getMessage(), EXIT_BAD_INPUT);
            }
        }
        if (json) {
            System.out.println(dev.infertop.view.SafeJson.line(DiffJson.json(diff, failOnPercent)));
        } else {
            DiffText.print(diff, System.out);
        }
        if (failOnPercent == null) {
            return 0;
        }
        List<Change> regressed = diff.regressions(failOnPercent);
        if (regressed.isEmpty()) {
            return 0;
        }
        System.err.printf(Locale.ROOT, "infertop: regressed beyond %s%%: %s%n", failOnPercent,
                String.join(", ", regressed.stream().map(c -> String.format(Locale.ROOT, "%s %+.1f%% (p %.4f)",
                        c.name(), c.deltaPercent(), c.pAdjusted())).toList()));
        return EXIT_REGRESSED;
    }
}
