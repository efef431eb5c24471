package dev.infertop.it;

import dev.infertop.ffi.UprobeMultiSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How infertop's uprobes are attached. Where the kernel has uprobe-multi links (Linux 6.6+, process filtering
 * fixed), each program's sites in one file are one link: no perf-event uprobe, at most one link per program and
 * file, all of infertop's probes in them, through the overhead budget's re-attaching too, and none left after
 * infertop exits. Such a link is released with one grace period where each perf event waits for its own (what
 * made a quit take seconds). Where the kernel has none, the perf events, one per probe, and no link.
 */
class UprobeMultiLinksIT {
    private static final Pattern TRACING = Pattern.compile("tracing pid (\\d+) .*: (\\d+) probes attached");
    private static final Pattern PERF_UPROBE = Pattern.compile("^pid (\\d+)\\s+fd \\d+: prog_id \\d+\\s+(uprobe|uretprobe)");

    private static String bench;
    private static String tinyModel;

    @BeforeAll
    static void requirements() throws Throwable {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench").toString();
        tinyModel = Models.preset("tiny").toString();
    }

    private static InfertopProcess launch(String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(List.of(options));
        args.addAll(List.of("--", bench, "-m", tinyModel, "-p", "0", "-n", "0", "-pg", "32,32", "-r", "100000",
                "-t", "2"));
        return InfertopProcess.start(Map.of("INFERTOP_DEBUG", "1"), args.toArray(String[]::new));
    }

    @Test
    void eachProgramHoldsOneLinkPerFileAndNoneIsLeftAfterExit() throws Exception {
        boolean multi = UprobeMultiSupport.available();
        try (InfertopProcess infertop = launch("--budget", "0")) {
            infertop.awaitStderr("probes attached;", 90);
            Matcher tracing = TRACING.matcher(infertop.stderrText());
            assertTrue(tracing.find(), infertop.stderrText());
            int attached = Integer.parseInt(tracing.group(2));
            long owner = infertop.process.pid();

            List<UprobeMultiLinks.Link> links = UprobeMultiLinks.heldBy(owner);
            long perfUprobes = perfUprobesHeldBy(owner);
            if (multi) {
                assertEquals(0, perfUprobes, "no perf-event uprobe where uprobe-multi links are used");
                assertOneLinkPerProgramAndFile(links);
                assertEquals(attached, links.stream().mapToInt(link -> link.fileOffsets().size()).sum(),
                        "the links hold every probe infertop says it attached: " + links);
                assertTrue(links.size() < attached, "some link holds several probes: " + links);
            } else {
                assertEquals(List.of(), links, "no uprobe-multi link where the kernel has none");
                assertEquals(attached, perfUprobes, "one perf event per probe");
            }

            assertTrue(infertop.stderrText().contains(UprobeMultiSupport.verdict().line()),
                    "INFERTOP_DEBUG says which attach is in use: " + infertop.stderrText());

            LlamaBenchIT.signal(owner, "TERM");
            assertEquals(128 + 15, infertop.waitFor(60), infertop.stderrText());
            assertEquals(List.of(), UprobeMultiLinks.heldBy(owner));
        }
        LeakCheck.assertNothingLeft();
    }

    /** The overhead budget detaches the per-thread probes between sample windows and attaches them again. */
    @Test
    void theBudgetsReattachedProbesAreOneLinkPerProgramAndFileToo() throws Exception {
        Requirements.require(UprobeMultiSupport.available(), "needs uprobe-multi links (Linux 6.6+): "
                + UprobeMultiSupport.verdict().line());
        try (InfertopProcess infertop = launch("--budget", "0.05")) {
            infertop.awaitStderr("probes attached;", 90);
            long owner = infertop.process.pid();
            infertop.awaitStderr("infertop budget: gap phase", 120);
            // A window after a gap: the per-thread probes were attached again.
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (!windowAfterGap(infertop.stderrText())) {
                assertTrue(System.nanoTime() < deadline, "no sample window after a gap: " + infertop.stderrText());
                Thread.sleep(200);
            }
            int samples = 0;
            for (int i = 0; i < 20; i++) {
                List<UprobeMultiLinks.Link> links = UprobeMultiLinks.heldBy(owner);
                assertEquals(0, perfUprobesHeldBy(owner), "no perf-event uprobe");
                assertOneLinkPerProgramAndFile(links);
                samples += links.isEmpty() ? 0 : 1;
                Thread.sleep(100);
            }
            assertTrue(samples > 0, "infertop held its links while sampled");
            LlamaBenchIT.signal(owner, "TERM");
            assertEquals(128 + 15, infertop.waitFor(60), infertop.stderrText());
            assertEquals(List.of(), UprobeMultiLinks.heldBy(owner));
        }
        LeakCheck.assertNothingLeft();
    }

    private static boolean windowAfterGap(String stderr) {
        int gap = stderr.indexOf("infertop budget: gap phase");
        return gap >= 0 && stderr.indexOf("infertop budget: window phase", gap) >= 0;
    }

    private static void assertOneLinkPerProgramAndFile(List<UprobeMultiLinks.Link> links) {
        Map<String, List<UprobeMultiLinks.Link>> byProgramAndFile = links.stream()
                .collect(Collectors.groupingBy(link -> link.programId() + " " + link.path()));
        byProgramAndFile.forEach((key, same) -> assertEquals(1, same.size(),
                "one uprobe-multi link per program and file, not " + same));
    }

    private static long perfUprobesHeldBy(long pid) throws Exception {
        return Processes.output(Requirements.bpftool().toString(), "perf", "show").lines()
                .map(line -> PERF_UPROBE.matcher(line.strip())).filter(Matcher::find)
                .filter(m -> Long.parseLong(m.group(1)) == pid).count();
    }
}
