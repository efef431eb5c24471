package dev.infertop.snapshot;

import dev.infertop.io.FileAccess;
import dev.infertop.io.Umask;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.export.SnapshotDirectoryWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A snapshot of the fixture run written by the taker, read back, and refused when damaged or foreign. */
class SnapshotDirectoryTest {
    @TempDir
    Path temp;

    private Path written() {
        SnapshotFixtures.Run run = SnapshotFixtures.run(
                new SnapshotOptions(temp.resolve("snap-%p-%n").toString(), 0, true, 10));
        Path dir = temp.resolve("snap-4242-1");
        assertEquals(List.of("infertop: writing snapshot (exit)…", "infertop: snapshot (exit) written to " + dir),
                run.notices());
        return dir;
    }

    @Test
    void onExitWritesEveryFileAtomicallyAndNothingElse() throws IOException {
        Path dir = written();
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of("latency.hlog", "report.html", "summary.json", "trace.json"),
                    files.map(p -> p.getFileName().toString()).sorted().toList());
        }
        try (Stream<Path> files = Files.list(temp)) {
            assertEquals(List.of("snap-4242-1"), files.map(p -> p.getFileName().toString()).toList(),
                    "no temporary directory is left beside it");
        }
    }

    @Test
    void summaryHoldsTheJsonOutputsTotalsAndTheSnapshotsIdentity() throws IOException {
        JsonNode summary = new ObjectMapper().readTree(written().resolve("summary.json").toFile());
        assertEquals("total", summary.path("scope").asText());
        assertEquals(4, summary.path("tokens_prefill").asLong());
        assertEquals(3, summary.path("tokens_decode").asLong());
        assertEquals(4, summary.path("ops").path("MUL_MAT").path("groups").asLong());
        assertEquals(4, summary.path("ops").path("RMS_NORM+MUL").path("groups").asLong());
        // MUL_MAT's wall per graph: 120, 240, 360, 480 ns → 1200 ns
        assertEquals(0.001, summary.path("ops").path("MUL_MAT").path("wall_ms").asDouble(), 1e-9);
        JsonNode meta = summary.path("snapshot");
        assertEquals("infertop-snapshot", meta.path("format").asText());
        assertEquals("exit", meta.path("trigger").asText());
        assertEquals("/models/tiny.gguf", meta.path("target").path("model").path("path").asText());
        assertEquals("[\"token\",\"graph\",\"operator\"]", meta.path("layers_on").toString());
        assertEquals(0, meta.path("lost_events").asLong());
        assertFalse(meta.path("flight_recorder").path("truncated").asBoolean());
        assertTrue(meta.path("flight_recorder").path("records").asInt() > 0);
    }

    @Test
    void reportRecomputesTheSummarysPercentilesFromTheHlog() throws Exception {
        Path dir = written();
        SnapshotDirectory snapshot = SnapshotDirectory.open(dir);
        JsonNode summary = snapshot.summary();
        JsonNode report = SnapshotReport.json(snapshot);
        for (String field : List.of("count", "p50", "p90", "p99", "max", "mean")) {
            assertEquals(summary.path("tpot_ms").path(field).asDouble(),
                    report.path("tokens").path("tpot_ms").path(field).asDouble(), "tpot " + field);
            assertEquals(summary.path("ttft_ms").path(field).asDouble(),
                    report.path("tokens").path("ttft_ms").path(field).asDouble(), "ttft " + field);
        }
        assertEquals(3, report.path("tokens").path("tpot_ms").path("count").asLong());
        for (String op : List.of("MUL_MAT", "RMS_NORM+MUL", "ADD")) {
            for (String field : List.of("groups", "wall_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")) {
                assertEquals(summary.path("ops").path(op).path(field).asDouble(),
                        report.path("ops").path(op).path(field).asDouble(), op + " " + field);
            }
        }
        // 480 ns at 2 significant digits is held as 480..483: its highest equivalent value
        assertEquals(0.0005, report.path("ops").path("MUL_MAT").path("max_ms").asDouble());
        assertFalse(report.path("experts").path("recorded").asBoolean());
    }

    @Test
    void intervalsOfEachTagAddUpToItsTotal() throws Exception {
        SnapshotDirectory snapshot = SnapshotDirectory.open(written());
        for (var entry : snapshot.totalsByTag().entrySet()) {
            List<SnapshotDirectory.HlogInterval> intervals = snapshot.intervalsByTag().get(entry.getKey());
            long count = intervals.stream().mapToLong(SnapshotDirectory.HlogInterval::count).sum();
            double sumNs = intervals.stream().mapToDouble(i -> i.count() * i.meanNs()).sum();
            assertEquals(entry.getValue().getTotalCount(), count, entry.getKey());
            assertEquals(entry.getValue().getMean() * count, sumNs, 1e-6 * sumNs + 1e-9, entry.getKey());
            assertTrue(intervals.stream().allMatch(i -> i.startS() >= 0 && i.lengthS() >= 0), intervals.toString());
        }
        assertTrue(snapshot.intervalsByTag().containsKey("op:MUL_MAT"), snapshot.intervalsByTag().keySet().toString());
    }

    @Test
    void textReportShowsEachView() throws Exception {
        var bytes = new java.io.ByteArrayOutputStream();
        SnapshotReport.printText(SnapshotDirectory.open(written()), new java.io.PrintStream(bytes, true));
        String text = bytes.toString();
        assertTrue(text.contains("Across tokens"), text);
        assertTrue(text.contains("  decode         3 tokens"), text);
        assertTrue(text.contains("Per op type"), text);
        assertTrue(text.contains("MUL_MAT"), text);
        assertTrue(text.contains("Across experts (tokens per expert over the run, prefill + decode)\n"
                + "  not recorded in this run (moe layer off)"), text);
    }

    private static String refusal(Path dir) {
        return assertThrows(SnapshotReadException.class, () -> SnapshotDirectory.open(dir)).getMessage();
    }

    private static void truncate(Path file, double fraction) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(bytes, (int) (bytes.length * fraction)));
    }

    @Test
    void truncatedSummaryIsRefusedNamingIt() throws IOException {
        Path dir = written();
        truncate(dir.resolve("summary.json"), 0.5);
        String message = refusal(dir);
        assertTrue(message.startsWith(dir.resolve("summary.json") + ": truncated or not JSON"), message);
        assertFalse(message.contains("\n"), "one line");
    }

    @Test
    void truncatedHlogIsRefusedNamingIt() throws IOException {
        Path dir = written();
        truncate(dir.resolve("latency.hlog"), 0.7);
        String message = refusal(dir);
        assertTrue(message.startsWith(dir.resolve("latency.hlog") + ": "), message);
    }

    @Test
    void hlogCutAtALineEndIsRefusedByItsCounts() throws IOException {
        Path dir = written();
        Path hlog = dir.resolve("latency.hlog");
        List<String> lines = Files.readAllLines(hlog);
        Files.write(hlog, lines.subList(0, lines.size() - 1));
        String message = refusal(dir);
        assertTrue(message.startsWith(hlog + ": holds "), message);
        assertTrue(message.contains("where summary.json counts"), message);
    }

    @Test
    void truncatedTraceIsRefusedNamingIt() throws IOException {
        Path dir = written();
        truncate(dir.resolve("trace.json"), 0.5);
        String message = refusal(dir);
        assertTrue(message.startsWith(dir.resolve("trace.json") + ": truncated or not JSON"), message);
    }

    @Test
    void truncatedReportIsRefusedNamingIt() throws IOException {
        Path dir = written();
        truncate(dir.resolve("report.html"), 0.5);
        assertEquals(dir.resolve("report.html") + ": truncated (no closing </html>)", refusal(dir));
    }

    @Test
    void foreignDirectoriesAreRefused() throws IOException {
        Path empty = Files.createDirectory(temp.resolve("empty"));
        assertEquals(empty + " is not an infertop snapshot: it has no summary.json", refusal(empty));
        Path foreign = Files.createDirectory(temp.resolve("foreign"));
        Files.writeString(foreign.resolve("summary.json"), "{\"final\": true}");
        assertEquals(foreign.resolve("summary.json")
                + ": not an infertop snapshot summary (no snapshot.format \"infertop-snapshot\")", refusal(foreign));
        assertEquals(temp.resolve("nowhere") + ": no such directory", refusal(temp.resolve("nowhere")));
    }

    @Test
    void missingFileIsRefusedNamingIt() throws IOException {
        Path dir = written();
        Files.delete(dir.resolve("trace.json"));
        assertEquals(dir.resolve("trace.json") + ": missing", refusal(dir));
    }

    @Test
    void unwritablePathIsOneNoticeNotACrash() throws IOException {
        Path file = Files.writeString(temp.resolve("a-file"), "x");
        SnapshotFixtures.Run run = SnapshotFixtures.run(
                new SnapshotOptions(file.resolve("snap").toString(), 0, true, 10));
        assertEquals(2, run.notices().size(), run.notices().toString());
        String notice = run.notices().getLast();
        assertTrue(notice.startsWith("infertop: cannot write snapshot " + file.resolve("snap") + ": "), notice);
        assertFalse(notice.contains("\n"));
        assertTrue(run.last().isFinal(), "the final snapshot still reached the view");
    }

    @Test
    void fullDiskIsOneNoticeAndLeavesNoHalfDirectory() throws Exception {
        Path mount = Files.createDirectory(temp.resolve("tiny"));
        boolean mounted = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", mount.toString())
                .redirectErrorStream(true).start().waitFor() == 0;
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(mounted, "CI runs as root: a 4 KiB tmpfs must mount"); // in CI a test that cannot run fails
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(mounted, "needs root to mount a 4 KiB tmpfs");
        try {
            SnapshotFixtures.Run run = SnapshotFixtures.run(
                    new SnapshotOptions(mount.resolve("snap").toString(), 0, true, 10));
            assertEquals(2, run.notices().size(), run.notices().toString());
            String notice = run.notices().getLast();
            assertTrue(notice.startsWith("infertop: cannot write snapshot " + mount.resolve("snap") + ": "), notice);
            assertTrue(notice.contains("No space left on device"), notice);
            try (Stream<Path> left = Files.list(mount)) {
                assertEquals(List.of(), left.toList(), "no half-written directory, no temporary one");
            }
        } finally {
            new ProcessBuilder("umount", mount.toString()).start().waitFor();
        }
    }

    @Test
    void theTakerWritesPrivateDirectoriesUnlessTheOptionsShareThem() throws Exception {
        Path dir = written();
        assertEquals("rwx------", Umask.mode(dir));
        assertEquals("rw-------", Umask.mode(dir.resolve("summary.json")));
        SnapshotFixtures.run(new SnapshotOptions(temp.resolve("shared-%n").toString(), 0, true, 10,
                FileAccess.SHARED));
        assertEquals("rwxr-xr-x", Umask.mode(temp.resolve("shared-1")));
        assertEquals("rw-r--r--", Umask.mode(temp.resolve("shared-1/trace.json")));
    }

    @Test
    void aSecondSnapshotOfTheSameNameGetsASuffix() throws Exception {
        var content = SnapshotFixtures.content();
        Path first = SnapshotDirectoryWriter.write(temp.resolve("same"), content);
        Path second = SnapshotDirectoryWriter.write(temp.resolve("same"), content);
        assertEquals(temp.resolve("same"), first);
        assertEquals(temp.resolve("same-2"), second);
    }
}
