package dev.infertop.target;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's CPU time so far: utime + stime of all its threads, from /proc/PID/stat (fields 14 and 15, in
 * clock ticks of USER_HZ = 100). The command name (field 2) may hold spaces and parentheses: fields are
 * counted after its last ')'.
 */
public final class ProcessCpuTime {
    private ProcessCpuTime() {}

    private static final long CLOCK_TICK_NS = 10_000_000; // USER_HZ 100

    /** Of process {@code pid}; IOException when it is gone or the file is not as expected. */
    public static long ns(int pid) throws IOException {
        return of(Path.of("/proc/" + pid + "/stat"));
    }

    /** Of this JVM. */
    public static long selfNs() throws IOException {
        return of(Path.of("/proc/self/stat"));
    }

    static long of(Path stat) throws IOException {
        String text = Files.readString(stat);
        String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
        try {
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * CLOCK_TICK_NS;
        } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
            throw new IOException("unexpected " + stat);
        }
    }
}
