package dev.infertop.export;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.snapshot.SnapshotFixtures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An optional rendering never costs the snapshot: bounded in time, and a failure is a note, not a lost file. */
class OptionalRenderingTest {
    @TempDir
    Path temp;

    @Test
    void aRenderingThatFinishesIsWritten() throws Exception {
        Path file = temp.resolve("a.svg");
        assertNull(SnapshotDirectoryWriter.renderOptional(file, () -> "<svg/>", 5_000));
        assertEquals("<svg/>", Files.readString(file));
    }

    @Test
    void aRenderingPastItsBoundIsLeftOutWithTheReasonAndNoFile() {
        Path file = temp.resolve("slow.svg");
        long start = System.nanoTime();
        String why = SnapshotDirectoryWriter.renderOptional(file, () -> {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "<svg/>";
        }, 200);
        assertEquals("rendering took over 200 ms", why);
        assertTrue((System.nanoTime() - start) / 1_000_000 < 5_000, "the caller waited past the bound");
        assertFalse(Files.exists(file));
    }

    @Test
    void aRenderingThatThrowsIsLeftOutWithItsMessage() {
        Path file = temp.resolve("bad.svg");
        String why = SnapshotDirectoryWriter.renderOptional(file, () -> {
            throw new IllegalStateException("no layout");
        }, 5_000);
        assertEquals("rendering failed: no layout", why);
        assertFalse(Files.exists(file));
    }

    @Test
    void theSummaryNamesWhatWasLeftOutAndWhy() throws Exception {
        JsonNode summary = new ObjectMapper().readTree(SummaryWriter.json(SnapshotFixtures.content(),
                List.of("summary.json"), List.of(new SnapshotDirectoryWriter.LeftOut("operator-dag.svg",
                        "rendering took over 10 s"))).toString());
        JsonNode leftOut = summary.path("snapshot").path("left_out");
        assertEquals(1, leftOut.size());
        assertEquals("operator-dag.svg", leftOut.get(0).path("file").asText());
        assertEquals("rendering took over 10 s", leftOut.get(0).path("why").asText());
        assertTrue(new ObjectMapper().readTree(SummaryWriter.json(SnapshotFixtures.content(), List.of(), List.of())
                .toString()).path("snapshot").path("left_out").isMissingNode(), "no note when nothing is missing");
    }

    @Test
    void anAbandonedWriteLosesOnlyItsOwnTemporaryDirectories() throws Exception {
        Path target = temp.resolve("snap-3");
        Files.createDirectories(temp.resolve(".snap-3.tmp-123/sub"));
        Files.writeString(temp.resolve(".snap-3.tmp-123/sub/trace.json"), "{");
        Files.createDirectories(temp.resolve(".snap-30.tmp-9"));
        Files.createDirectories(temp.resolve("snap-2"));
        SnapshotDirectoryWriter.deleteTemporaries(target);
        try (var left = Files.list(temp)) {
            assertEquals(List.of(".snap-30.tmp-9", "snap-2"),
                    left.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }
}
