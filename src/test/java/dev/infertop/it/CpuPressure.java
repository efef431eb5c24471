package dev.infertop.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The kernel's CPU pressure (PSI, /proc/pressure/cpu): the share of wall time in which some runnable task waited
 * for a CPU. A timing comparison between two parts of one run holds only where the machine's other work did not
 * come and go; where it did (a loaded CI host, a busy loop per core), such a test measures and says so instead of
 * asserting.
 */
final class CpuPressure {
    private static final Path PSI = Path.of("/proc/pressure/cpu");

    private final long startTotalUs;
    private final long startNs;

    private CpuPressure(long startTotalUs) {
        this.startTotalUs = startTotalUs;
        this.startNs = System.nanoTime();
    }

    /** Starts a reading; {@link #share()} is then NaN where the kernel keeps no CPU pressure. */
    static CpuPressure start() {
        return new CpuPressure(someTotalUs());
    }

    /** Share of the wall time since {@link #start()} in which some task waited for a CPU, 0..1 (NaN: unknown). */
    double share() {
        long now = someTotalUs();
        double wallUs = (System.nanoTime() - startNs) / 1e3;
        if (now < 0 || startTotalUs < 0 || wallUs <= 0) {
            return Double.NaN;
        }
        return Math.min(1, (now - startTotalUs) / wallUs);
    }

    /** The "some" line's total (µs), or -1 when there is none. */
    private static long someTotalUs() {
        try {
            for (String line : Files.readAllLines(PSI)) {
                if (line.startsWith("some ")) {
                    int at = line.indexOf("total=");
                    return at < 0 ? -1 : Long.parseLong(line.substring(at + 6).strip());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
