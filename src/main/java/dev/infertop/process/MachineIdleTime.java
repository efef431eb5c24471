package dev.infertop.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The machine's idle CPU time so far, all CPUs together: idle + iowait of /proc/stat's first line ("cpu  user
 * nice system idle iowait ..."), in clock ticks of USER_HZ = 100. Whether infertop's own CPU found a free core or
 * took one from the target is told by whether the machine had this much idle time while it ran.
 */
public final class MachineIdleTime {
    private MachineIdleTime() {}

    private static final long CLOCK_TICK_NS = 10_000_000; // USER_HZ 100
    private static final Path STAT = Path.of("/proc/stat");

    public static long ns() throws IOException {
        String text = Files.readString(STAT);
        int end = text.indexOf('\n');
        return ofCpuLine(end < 0 ? text : text.substring(0, end));
    }

    static long ofCpuLine(String line) throws IOException {
        // Split by hand: read every second, a regex compiled per read costs more than the read.
        long[] fields = new long[5];
        if (!line.startsWith("cpu ")) {
            throw unexpected(line);
        }
        int field = -1;
        int i = "cpu".length();
        int n = line.length();
        while (field < 4) {
            while (i < n && line.charAt(i) == ' ') {
                i++;
            }
            int start = i;
            long value = 0;
            while (i < n && line.charAt(i) >= '0' && line.charAt(i) <= '9' && i - start < 18) {
                value = value * 10 + (line.charAt(i++) - '0');
            }
            if (i == start || (i < n && line.charAt(i) != ' ')) {
                throw unexpected(line);
            }
            fields[++field] = value;
        }
        return (fields[3] + fields[4]) * CLOCK_TICK_NS; // user nice system idle iowait
    }

    private static IOException unexpected(String line) {
        return new IOException("unexpected /proc/stat: " + line.substring(0, Math.min(line.length(), 80)));
    }
}
