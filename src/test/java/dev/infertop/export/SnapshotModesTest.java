package dev.infertop.export;

import dev.infertop.io.FileAccess;
import dev.infertop.io.Umask;
import dev.infertop.snapshot.SnapshotFixtures;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A snapshot holds the model path, prompt lengths and the names of the target's and other processes' threads:
 * private by default, its directory 0700 and every file 0600 whatever the umask; shared (--snapshot-mode
 * shared) 0755 and 0644, again whatever the umask. Directories made for the pattern get the directory mode.
 */
class SnapshotModesTest {
    @TempDir
    Path temp;

    private static SnapshotContent withDag() {
        SnapshotContent c = SnapshotFixtures.content();
        return new SnapshotContent(c.last(), c.window(), c.tensorNames(), c.histograms(), c.ticks(), c.trigger(),
                c.createdEpochMs(), c.infertopVersion(), c.threadNames(), OperatorDag.of(OperatorDagTest.graph()));
    }

    private static Map<String, String> modes(Path dir) throws Exception {
        Map<String, String> modes = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList()) {
                modes.put(file.getFileName().toString(), Umask.mode(file));
            }
        }
        return modes;
    }

    @ParameterizedTest(name = "{0} under umask {1}")
    @CsvSource({"PRIVATE, 000, rwx------, rw-------", "PRIVATE, 022, rwx------, rw-------",
            "PRIVATE, 077, rwx------, rw-------", "SHARED, 000, rwxr-xr-x, rw-r--r--",
            "SHARED, 022, rwxr-xr-x, rw-r--r--", "SHARED, 077, rwxr-xr-x, rw-r--r--"})
    void modesAreExactWhateverTheUmask(FileAccess access, String umask, String directoryMode, String fileMode)
            throws Exception {
        Umask.with(Integer.parseInt(umask, 8), () -> {
            Path target = temp.resolve("made/for/it/snap");
            Path dir = SnapshotDirectoryWriter.writeDirectory(target, withDag(), access).directory();
            assertEquals(target, dir);
            assertEquals(directoryMode, Umask.mode(dir));
            Map<String, String> expected = new TreeMap<>();
            for (String file : List.of("latency.hlog", "operator-dag.dot", "operator-dag.svg", "report.html",
                    "summary.json", "trace.json")) {
                expected.put(file, fileMode);
            }
            assertEquals(expected, modes(dir));
            // The directories the pattern needed are made with the same mode; the one that was there is left be.
            assertEquals(directoryMode, Umask.mode(temp.resolve("made")));
            assertEquals(directoryMode, Umask.mode(temp.resolve("made/for")));
            assertEquals(directoryMode, Umask.mode(temp.resolve("made/for/it")));
            assertEquals("rwx------", Umask.mode(temp), "JUnit's own temporary directory is not changed");
        });
    }
}
