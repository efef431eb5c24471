package dev.infertop.target;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;

/**
 * Reads the traced process's memory through /proc/PID/mem (root, or ptrace rights over it), off the hot path:
 * used once per address to name the operator DAG's leaf tensors (weights, inputs), which the probes do not read.
 */
public final class TargetMemory {
    private TargetMemory() {}

    /**
     * The NUL-terminated string of at most {@code maxBytes} at {@code address} in process {@code pid}, or null
     * when it cannot be read (the process is gone, the address is not mapped).
     */
    public static String cString(int pid, long address, int maxBytes) {
        if (address <= 0 || maxBytes <= 0) {
            return null;
        }
        byte[] bytes = new byte[maxBytes];
        try (RandomAccessFile mem = new RandomAccessFile("/proc/" + pid + "/mem", "r")) {
            mem.seek(address);
            int read = mem.read(bytes);
            if (read <= 0) {
                return null;
            }
            int length = 0;
            while (length < read && bytes[length] != 0) {
                length++;
            }
            return new String(bytes, 0, length, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** {@code length} bytes at {@code address} in process {@code pid}, or null when they cannot all be read. */
    public static byte[] bytes(int pid, long address, int length) {
        if (address <= 0 || length <= 0 || length > 1 << 20) {
            return null;
        }
        byte[] bytes = new byte[length];
        try (RandomAccessFile mem = new RandomAccessFile("/proc/" + pid + "/mem", "r")) {
            mem.seek(address);
            int read = 0;
            while (read < length) {
                int n = mem.read(bytes, read, length - read);
                if (n <= 0) {
                    return null;
                }
                read += n;
            }
            return bytes;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
