package dev.infertop.cli;

import dev.infertop.json.SafeJson;
import dev.infertop.diff.DiffHtml;
import dev.infertop.diff.DiffInputException;
import dev.infertop.diff.DiffJson;
import dev.infertop.diff.DiffText;
import dev.infertop.diff.Gate;
import dev.infertop.diff.RunDiff;
import dev.infertop.diff.RunLoader;
import dev.infertop.diff.RunMetrics;
import dev.infertop.ffi.OwnPriority;
import dev.infertop.io.FileAccess;
import dev.infertop.io.OutputFiles;
import dev.infertop.session.Preflight;
import dev.infertop.session.UserError;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code infertop diff A B}, {@code infertop diff A1 A2 … --vs B1 B2 …} and
 * {@code infertop diff --turns N -- COMMAND_A … --vs COMMAND_B …}: runs compared per generated token (see
 * dev.infertop.diff), the last form making its runs first, in turns. Exit status 0, 1 when {@code --fail-on} finds
 * a significant regression beyond its percentage, 3 when it cannot decide, 2 for a run that cannot be read or made,
 * or two sides with nothing to compare.
 */
@Command(name = "diff", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Compare two runs (snapshot directories or --json logs) per generated token:",
                "tokens/s, TTFT, TPOT, and per op type time per token, with a Mann-Whitney",
                "rank test over the runs' intervals; or several runs a side",
                "(A1 A2 ... --vs B1 B2 ...), tested between runs; or first run two commands",
                "in turns (--turns N -- COMMAND_A ... --vs COMMAND_B ...) and compare those.",
                "--fail-on PCT: exit 1 on a significant regression beyond PCT %%, 3 when",
                "undecided (too few samples, or a large change without significance);",
                "2 on unreadable input or a failed run."})
final class DiffCommand implements Callable<Integer> {
    /** Input that cannot be read, a run that cannot be made, or two sides with nothing to compare. */
    static final int EXIT_BAD_INPUT = 2;
    static final int EXIT_REGRESSED = 1;
    /** --fail-on could not decide: an undecided result is not a pass. */
    static final int EXIT_UNDECIDED = 3;
    /** Of a run's last line of standard error, what a message repeats. */
    static final int MAX_LINE_CHARS = 500;
    /** The word that parts A's runs (or command) from B's after --. */
    static final String VS = "--vs";

    @Parameters(paramLabel = "RUN", arity = "0..*", description = {"A B: the baseline and the run compared with it,"
            + " each a snapshot directory or a --json log; or A's runs before --vs.",
            "With --turns, after --: COMMAND_A ... --vs COMMAND_B ..."})
    List<String> runs = new ArrayList<>();

    @Option(names = VS, paramLabel = "B", arity = "1..*", description = "B's runs, after A's (several a side: the "
            + "test compares runs, one value per run and figure).")
    List<Path> vs;

    @Option(names = "--turns", paramLabel = "N", description = "Run COMMAND_A and COMMAND_B N times each under "
            + "infertop, in turns (A B, B A, ...), write each run's snapshot, and compare the runs.")
    Integer turns;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "1", description = "With --turns: pairs run first "
            + "and not counted (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--runs-dir", paramLabel = "DIR", description = "With --turns: a new directory for the runs' "
            + "snapshots (a1, b1, a2, ...) (default: infertop-turns-TIME).")
    Path runsDir;

    @Option(names = "--json", description = "One JSON object instead of text.")
    boolean json;

    @Option(names = "--html", paramLabel = "FILE", description = "Also write a side-by-side HTML report to FILE.")
    Path html;

    @Option(names = "--fail-on", paramLabel = "PCT", description = "Exit 1 when the decode rate falls, or an op's time "
            + "per generated token rises, by more than PCT %% with significance; 3 when that cannot be decided.")
    Double failOnPercent;

    @Override
    public Integer call() throws Exception {
        if (failOnPercent != null && !(failOnPercent >= 0 && failOnPercent < 1e6)) {
            throw new UserError("--fail-on takes a percentage of 0 or more, got " + failOnPercent, EXIT_BAD_INPUT);
        }
        List<Path> pathsA;
        List<Path> pathsB;
        if (turns != null) {
            List<List<Path>> made = inTurns();
            pathsA = made.get(0);
            pathsB = made.get(1);
        } else {
            if (runsDir != null) {
                throw new UserError("--runs-dir goes with --turns", EXIT_BAD_INPUT);
            }
            if (vs != null) {
                if (runs.isEmpty()) {
                    throw new UserError("no run of A before --vs: infertop diff A1 A2 ... --vs B1 B2 ...",
                            EXIT_BAD_INPUT);
                }
                pathsA = runs.stream().map(Path::of).toList();
                pathsB = List.copyOf(vs);
            } else if (runs.size() == 2) {
                pathsA = List.of(Path.of(runs.get(0)));
                pathsB = List.of(Path.of(runs.get(1)));
            } else {
                throw new UserError("diff takes two runs (A B), or several a side (A1 A2 ... --vs B1 B2 ...), got "
                        + runs.size(), EXIT_BAD_INPUT);
            }
        }
        RunDiff diff;
        try {
            diff = RunDiff.of(load(pathsA), load(pathsB),
                    failOnPercent == null ? RunDiff.DEFAULT_LARGE_PERCENT : failOnPercent);
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
            System.out.println(SafeJson.line(DiffJson.json(diff, failOnPercent)));
        } else {
            DiffText.print(diff, System.out);
        }
        if (failOnPercent == null) {
            return 0;
        }
        Gate gate = Gate.of(diff, failOnPercent);
        return switch (gate.verdict()) {
            case NO_REGRESSION -> 0;
            case REGRESSION -> {
                System.err.println("infertop: " + gate.line());
                yield EXIT_REGRESSED;
            }
            case UNDECIDED -> {
                System.err.println("infertop: " + gate.line());
                yield EXIT_UNDECIDED;
            }
        };
    }

    private static List<RunMetrics> load(List<Path> paths) throws DiffInputException {
        List<RunMetrics> loaded = new ArrayList<>();
        for (Path path : paths) {
            loaded.add(new RunMetrics(RunLoader.load(path)));
        }
        return loaded;
    }

    /**
     * Runs the two commands in turns under infertop (as {@code overhead} runs its two sides), each counted run
     * writing its snapshot into the runs directory; the snapshots of A's runs and of B's.
     */
    private List<List<Path>> inTurns() throws Exception {
        if (turns < 1 || turns > 1000) {
            throw new UserError("--turns must be between 1 and 1000, got " + turns, EXIT_BAD_INPUT);
        }
        if (warmup < 0 || warmup > 100) {
            throw new UserError("--warmup must be between 0 and 100, got " + warmup, EXIT_BAD_INPUT);
        }
        int split = runs.indexOf(VS);
        if (vs != null || split < 1 || split == runs.size() - 1) {
            throw new UserError("--turns takes two commands after --: infertop diff --turns N -- COMMAND_A ... "
                    + VS + " COMMAND_B ...", EXIT_BAD_INPUT);
        }
        List<String> commandA = List.copyOf(runs.subList(0, split));
        List<String> commandB = List.copyOf(runs.subList(split + 1, runs.size()));
        Preflight.requirePrivileges();
        Path dir = runsDir != null ? runsDir : Path.of("infertop-turns-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)));
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(FileAccess.PRIVATE.directoryPermissions()));
        } catch (FileAlreadyExistsException e) {
            throw new UserError(dir + " exists: --runs-dir takes a new directory", EXIT_BAD_INPUT);
        } catch (IOException e) {
            throw new UserError("cannot make " + dir + ": " + e.getMessage(), EXIT_BAD_INPUT);
        }
        Turns.Runs<Path> made = Turns.alternate(turns, warmup, (isB, pair) -> {
            String name = (isB ? "b" : "a") + (pair + 1);
            Path snapshot = pair < 0 ? null : dir.resolve(name);
            long startNs = System.nanoTime();
            runOnce(isB ? commandB : commandA, snapshot, pair < 0 ? "warm-up " + (isB ? "B" : "A") : name);
            System.err.printf(Locale.ROOT, "infertop diff: %s %s: %.1f s%n", pair < 0 ? "warm-up (not counted)"
                    : String.format(Locale.ROOT, "pair %d/%d", pair + 1, turns), pair < 0 ? (isB ? "B" : "A")
                    : snapshot, (System.nanoTime() - startNs) / 1e9);
            return snapshot;
        });
        return List.of(made.first(), made.second());
    }

    /** One run of {@code command} under infertop, its snapshot written to {@code snapshot} (none when null). */
    private static void runOnce(List<String> command, Path snapshot, String name) throws IOException,
            InterruptedException {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.2", "--budget", "0"));
        if (snapshot != null) {
            args.addAll(List.of("--snapshot-on-exit", "--snapshot-dir", snapshot.toString()));
        }
        Process process = OwnPriority.start(new ProcessBuilder(Turns.infertopOn(args, command))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD));
        // The target's own output comes through infertop's: read in bounded pieces, the last line kept for a message.
        String last = "no output";
        try (var errors = new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8)) {
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = errors.read()) != -1) {
                if (c == '\n') {
                    if (!line.isEmpty() && !line.toString().isBlank()) {
                        last = line.toString();
                    }
                    line.setLength(0);
                } else if (line.length() < MAX_LINE_CHARS) {
                    line.append((char) c);
                }
            }
            if (!line.toString().isBlank()) {
                last = line.toString();
            }
        }
        int exit = process.waitFor();
        if (exit != 0) {
            throw new UserError("run " + name + " (" + command.getFirst() + ") failed (exit " + exit + "): " + last,
                    EXIT_BAD_INPUT);
        }
        if (snapshot != null && !Files.isDirectory(snapshot)) {
            throw new UserError("run " + name + " (" + command.getFirst() + ") wrote no snapshot in " + snapshot
                    + ": " + last, EXIT_BAD_INPUT);
        }
    }
}
