package dev.infertop.target;

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
        String[] fields = line.trim().split(" +");
        if (fields.length < 6 || !fields[0].equals("cpu")) {
            throw new IOException("unexpected /proc/stat: " + line.substring(0, Math.min(line.length(), 80)));
        }
        try {
            return (Long.parseLong(fields[4]) + Long.parseLong(fields[5])) * CLOCK_TICK_NS;
        } catch (NumberFormatException e) {
            throw new IOException("unexpected /proc/stat: " + line.substring(0, Math.min(line.length(), 80)));
        }
    }
}
