package dev.infertop.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.ffi.LibC;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshot files are input like any other (a snapshot can come from anywhere): {@code report} and
 * {@code replay} refuse what is not a regular file or is oversized, and values that would size an allocation
 * are bounded, each with one line naming the file.
 */
class SnapshotBoundsTest {
    private static final Duration QUICK = Duration.ofSeconds(20);

    @TempDir
    Path temp;

    private Path written() {
        SnapshotFixtures.run(new SnapshotOptions(temp.resolve("snap-%p-%n").toString(), 0, true, 10));
        return temp.resolve("snap-4242-1");
    }

    private static String refusal(Path dir) {
        return assertTimeoutPreemptively(QUICK,
                () -> assertThrows(SnapshotReadException.class, () -> SnapshotDirectory.open(dir)).getMessage());
    }

    @Test
    void aFifoNamedReportHtmlIsRefusedWithoutBlocking() throws Exception {
        Path dir = written();
        Path report = dir.resolve("report.html");
        Files.delete(report);
        LibC.mkfifo(report.toString(), 0600);
        assertEquals(report + ": not a regular file (a FIFO)", refusal(dir));
    }

    @Test
    void aSymbolicLinkInPlaceOfASnapshotFileIsRefused() throws Exception {
        Path dir = written();
        Path trace = dir.resolve("trace.json");
        Path elsewhere = Files.move(trace, temp.resolve("elsewhere.json"));
        Files.createSymbolicLink(trace, elsewhere);
        assertEquals(trace + ": not a regular file (a symbolic link)", refusal(dir));
    }

    @Test
    void anOversizedFileIsRefusedBeforeItIsRead() throws Exception {
        Path dir = written();
        Path trace = dir.resolve("trace.json");
        try (RandomAccessFile file = new RandomAccessFile(trace.toFile(), "rw")) {
            file.setLength(SnapshotDirectory.MAX_TRACE_BYTES + 1); // sparse: costs no disk
        }
        assertEquals(trace + ": too large (" + (SnapshotDirectory.MAX_TRACE_BYTES + 1) + " bytes, at most "
                + SnapshotDirectory.MAX_TRACE_BYTES + " read)", refusal(dir));
    }

    @Test
    void aHugeDurationIsNotWalkedCellByCell() throws Exception {
        Path dir = written();
        Path trace = dir.resolve("trace.json");
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = (ObjectNode) mapper.readTree(trace.toFile());
        ArrayNode events = (ArrayNode) root.path("traceEvents");
        events.addObject().put("ph", "X").put("cat", "op").put("name", "ADD").put("tid", 77).put("ts", 0)
                .put("dur", 1e300);
        events.addObject().put("ph", "X").put("cat", "wait").put("name", "barrier").put("tid", 78)
                .put("ts", -1e300).put("dur", 1e300);
        mapper.writeValue(trace.toFile(), root);
        SnapshotDirectory snapshot = assertTimeoutPreemptively(QUICK, () -> SnapshotDirectory.open(dir));
        assertTrue(snapshot.lanes().stream().anyMatch(l -> l.tid() == 77), snapshot.lanes().toString());
    }

    @Test
    void aHugeExpertCountIsRefused() throws Exception {
        Path dir = written();
        Path summaryFile = dir.resolve("summary.json");
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode summary = (ObjectNode) mapper.readTree(summaryFile.toFile());
        ObjectNode moe = summary.putObject("moe");
        moe.put("experts", 2_000_000_000);
        moe.putObject("layers").putObject("0").putArray("prefill").add(1);
        mapper.writeValue(summaryFile.toFile(), summary);
        assertEquals(summaryFile + ": moe.experts is 2000000000 (at most 1024)", refusal(dir));

        moe.put("experts", 8);
        ArrayNode counts = ((ObjectNode) moe.path("layers").path("0")).putArray("decode");
        for (int i = 0; i < 5000; i++) {
            counts.add(i);
        }
        mapper.writeValue(summaryFile.toFile(), summary);
        assertEquals(summaryFile + ": MoE layer 0 has 5000 decode counts (at most 1024 experts)", refusal(dir));
    }

    @Test
    void anHlogLineThatWouldAllocateTensOfMegabytesIsRefused() throws Exception {
        Path dir = written();
        Path hlog = dir.resolve("latency.hlog");
        Histogram precise = new Histogram(Long.MAX_VALUE / 4, 5);
        precise.recordValue(1);
        precise.setTag("x");
        try (PrintStream out = new PrintStream(Files.newOutputStream(hlog, StandardOpenOption.APPEND))) {
            new HistogramLogWriter(out).outputIntervalHistogram(1, 2, precise);
        }
        String message = refusal(dir);
        assertTrue(message.startsWith(hlog + ": interval ") && message.endsWith(
                " has 5 significant digits (infertop writes at most 3): not an infertop log"), message);
    }

    @Test
    void moeTotalsClampWhatTheCheckWouldRefuse() throws Exception {
        ObjectNode summary = new ObjectMapper().createObjectNode();
        ObjectNode moe = summary.putObject("moe");
        moe.put("experts", Integer.MAX_VALUE);
        moe.putObject("layers").putObject("0").putArray("prefill").add(3);
        assertEquals(List.of(3L, 0L), List.of(MoeSummary.totals(summary).totalPrefill()[0][0],
                (long) MoeSummary.totals(summary).totalPrefill()[0].length - MoeSummary.MAX_EXPERTS));
    }
}
