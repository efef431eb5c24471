package dev.infertop.export;

import dev.infertop.snapshot.SnapshotFixtures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A snapshot directory carries the last decode graph's operator DAG when one was traced, and lists it. */
class SnapshotDagTest {
    @TempDir
    Path temp;

    private static SnapshotContent withDag(OperatorDag dag) {
        SnapshotContent c = SnapshotFixtures.content();
        return new SnapshotContent(c.last(), c.window(), c.tensorNames(), c.histograms(), c.ticks(), c.trigger(),
                c.createdEpochMs(), c.infertopVersion(), c.threadNames(), dag);
    }

    @Test
    void theDagIsWrittenAsDotWithItsCriticalPathAndListedInTheSummary() throws Exception {
        OperatorDag dag = OperatorDag.of(OperatorDagTest.graph());
        Path dir = SnapshotDirectoryWriter.write(temp.resolve("snap"), withDag(dag));
        Path dot = dir.resolve(SnapshotDirectoryWriter.DAG_DOT);
        assertTrue(Files.isRegularFile(dot));
        assertEquals(DagDotWriter.toDot(dag), Files.readString(dot), "the same text --dag writes");
        String summary = Files.readString(dir.resolve(SnapshotDirectoryWriter.SUMMARY));
        assertTrue(summary.contains("\"" + SnapshotDirectoryWriter.DAG_DOT + "\""), summary);
        assertEquals(DagSvgWriter.svg(dag), Files.readString(dir.resolve(SnapshotDirectoryWriter.DAG_SVG)),
                "our own SVG, with or without Graphviz");
        assertTrue(summary.contains("\"" + SnapshotDirectoryWriter.DAG_SVG + "\""), summary);
        assertFalse(summary.contains("left_out"), summary);
    }

    @Test
    void withoutATracedDecodeGraphThereIsNoDagFileAndTheSummarySaysWhy() throws Exception {
        Path dir = SnapshotDirectoryWriter.write(temp.resolve("snap"), withDag(null));
        assertFalse(Files.exists(dir.resolve(SnapshotDirectoryWriter.DAG_DOT)));
        assertFalse(Files.exists(dir.resolve(SnapshotDirectoryWriter.DAG_SVG)));
        com.fasterxml.jackson.databind.JsonNode snapshot = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(dir.resolve(SnapshotDirectoryWriter.SUMMARY).toFile()).path("snapshot");
        assertFalse(snapshot.path("files").toString().contains("operator-dag"), snapshot.toString());
        assertEquals(SnapshotDirectoryWriter.DAG_DOT, snapshot.path("left_out").get(0).path("file").asText());
        assertTrue(snapshot.path("left_out").get(0).path("why").asText().startsWith("no decode step traced whole"),
                snapshot.toString());
        assertEquals(SnapshotDirectoryWriter.DAG_SVG, snapshot.path("left_out").get(1).path("file").asText());
    }
}
