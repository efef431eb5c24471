package dev.infertop.snapshot;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.infertop.export.SnapshotDirectoryWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot directory whose one file (summary.json, latency.hlog, trace.json or report.html, the first byte
 * of the input picks) is replaced by the rest of the input, the others being a real snapshot's: read by
 * {@code report} (text and JSON) and {@code replay} (the frozen Snapshot). It opens, or is refused with one
 * SnapshotReadException line; no other exception, no hang.
 */
class SnapshotFuzzTest {
    private static final List<String> FILES = List.of(SnapshotDirectoryWriter.SUMMARY, SnapshotDirectoryWriter.HLOG,
            SnapshotDirectoryWriter.TRACE, SnapshotDirectoryWriter.REPORT);
    @TempDir
    static Path base;
    private static Path real;
    private static Path dir;

    @BeforeAll
    static void writeARealSnapshot() throws IOException {
        SnapshotFixtures.run(new SnapshotOptions(base.resolve("real-%p-%n").toString(), 0, true, 10));
        real = base.resolve("real-4242-1");
        dir = Files.createDirectory(base.resolve("fuzzed"));
    }

    @FuzzTest(maxDuration = "10s")
    void open(FuzzedDataProvider data) throws IOException {
        String replaced = FILES.get(data.consumeInt(0, FILES.size() - 1));
        byte[] content = data.consumeRemainingAsBytes();
        for (String file : FILES) {
            if (file.equals(replaced)) {
                Files.write(dir.resolve(file), content);
            } else {
                Files.copy(real.resolve(file), dir.resolve(file), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        SnapshotDirectory snapshot;
        try {
            snapshot = SnapshotDirectory.open(dir);
        } catch (SnapshotReadException refused) {
            if (refused.getMessage().contains("\n")) {
                throw new AssertionError("a refusal of more than one line: " + refused.getMessage());
            }
            return;
        }
        SnapshotReport.json(snapshot).toString();
        SnapshotReport.printText(snapshot, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        SummarySnapshot.of(snapshot);
    }
}
