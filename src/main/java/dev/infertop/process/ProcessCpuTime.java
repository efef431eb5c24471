package dev.infertop.process;

import dev.infertop.ffi.LibC;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's CPU time so far, all its threads, in nanoseconds: from the kernel's per-process CPU clock
 * (clock_gettime(2), the scheduler's own run time, exact to the nanosecond and including the slice a thread is
 * running now). /proc/PID/stat's utime + stime (fields 14 and 15) count clock ticks of USER_HZ = 100, 10 ms,
 * which is 1 % of a 1 s sample window of a single-threaded infertop: too coarse for a budget of 1 %. The stat
 * file stays the fallback where the clock is refused. Its command name (field 2) may hold spaces and
 * parentheses: fields are counted after its last ')'.
 */
public final class ProcessCpuTime {
    private ProcessCpuTime() {}

    private static final long CLOCK_TICK_NS = 10_000_000; // USER_HZ 100

    /** Of process {@code pid}; IOException when it is gone or the file is not as expected. */
    public static long ns(int pid) throws IOException {
        long ns = LibC.clockNs(LibC.processCpuClock(pid));
        return ns >= 0 ? ns : of(Path.of("/proc/" + pid + "/stat"));
    }

    /** Of this JVM. */
    public static long selfNs() throws IOException {
        long ns = LibC.clockNs(LibC.CLOCK_PROCESS_CPUTIME_ID);
        return ns >= 0 ? ns : of(Path.of("/proc/self/stat"));
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
