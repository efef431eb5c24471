package dev.infertop.machine;

import dev.infertop.ffi.OwnPriority;
import dev.infertop.io.RecordJson;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Measures the ceilings in a JVM of its own ({@link CeilingChild}: C2, a small heap, the buffer off-heap) and
 * checks what comes back. The buffer is eight times the last-level cache, at least 64 MiB, at most a quarter
 * of the memory available now.
 */
public final class CeilingMeasurement {
    private CeilingMeasurement() {}

    static final int ROUNDS = 7;
    static final long TIME_LIMIT_MS = 120_000;

    /** The buffer for this machine: far larger than its last-level cache, bounded by its free memory. */
    static long bufferBytes() {
        long llc = CpuInfo.lastLevelCacheBytes(8L << 20);
        long wanted = Math.max(64L << 20, 8 * llc);
        long available = availableMemoryBytes();
        return available > 0 ? Math.max(16L << 20, Math.min(wanted, available / 4)) : wanted;
    }

    public static MachineCeilings measure(int threads) throws IOException {
        if (threads < 1 || threads > 1024) {
            throw new IllegalArgumentException("threads must be 1 to 1024, not " + threads);
        }
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        String classpath;
        try {
            classpath = Path.of(CeilingChild.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException | RuntimeException e) {
            throw new IOException("cannot tell where infertop's classes are: " + e);
        }
        List<String> command = List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC",
                "-Xmx96m", "-XX:-UsePerfData", "-cp", classpath, CeilingChild.class.getName(),
                Integer.toString(threads), Long.toString(bufferBytes()), Integer.toString(ROUNDS));
        Process child = OwnPriority.start(
                new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT));
        try {
            byte[] output = child.getInputStream().readNBytes(64 * 1024);
            if (!child.waitFor(TIME_LIMIT_MS, TimeUnit.MILLISECONDS)) {
                throw new IOException("the measurement ran past " + TIME_LIMIT_MS / 1000 + " s");
            }
            if (child.exitValue() != 0) {
                throw new IOException("the measuring JVM failed with exit status " + child.exitValue());
            }
            return checked(RecordJson.read(output, MachineCeilings.class));
        } catch (RecordJson.Malformed e) {
            throw new IOException("the measuring JVM printed no ceilings record: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while measuring");
        } finally {
            child.destroyForcibly();
        }
    }

    /** Positive, finite and within what any machine infertop runs on can do (0.1 GB/s to 100 TB/s, likewise). */
    static MachineCeilings checked(MachineCeilings c) throws IOException {
        double[] figures = {c.memoryReadBytesPerSecond(), c.memoryReadMinBytesPerSecond(),
                c.memoryReadMaxBytesPerSecond(), c.computeFlopsPerSecond(), c.computeMinFlopsPerSecond(),
                c.computeMaxFlopsPerSecond()};
        for (double figure : figures) {
            if (!Double.isFinite(figure) || figure < 1e8 || figure > 1e14) {
                throw new IOException("implausible ceiling " + figure);
            }
        }
        if (c.formatVersion() != MachineCeilings.FORMAT_VERSION || c.threads() < 1) {
            throw new IOException("unexpected ceilings record (format " + c.formatVersion() + ")");
        }
        return c;
    }

    private static long availableMemoryBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // unknown: the wanted size stands
        }
        return 0;
    }
}
