package dev.infertop.machine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What /proc/cpuinfo and sysfs say about this machine's CPU: its model and its last-level cache. */
final class CpuInfo {
    private CpuInfo() {}

    /** "AMD EPYC", "Cortex-A76 (CPU part 0xd0b)"…: the first model line, else the architecture. */
    static String model() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equals("model name")) {
                    return line.substring(colon + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through: the architecture is still something
        }
        return System.getProperty("os.arch");
    }

    /** The largest cache size cpu0 reports (the last level), or {@code fallbackBytes}. */
    static long lastLevelCacheBytes(long fallbackBytes) {
        long largest = 0;
        Path caches = Path.of("/sys/devices/system/cpu/cpu0/cache");
        try (var entries = Files.list(caches)) {
            for (Path index : entries.filter(p -> p.getFileName().toString().startsWith("index")).toList()) {
                largest = Math.max(largest, parseSize(Files.readString(index.resolve("size")).trim()));
            }
        } catch (IOException | RuntimeException e) {
            return fallbackBytes;
        }
        return largest > 0 ? largest : fallbackBytes;
    }

    /** "32768K", "1M", "512": bytes. */
    static long parseSize(String text) {
        if (text.isEmpty()) {
            return 0;
        }
        char unit = Character.toUpperCase(text.charAt(text.length() - 1));
        long factor = switch (unit) {
            case 'K' -> 1L << 10;
            case 'M' -> 1L << 20;
            case 'G' -> 1L << 30;
            default -> 1;
        };
        String digits = factor == 1 ? text : text.substring(0, text.length() - 1);
        return Long.parseLong(digits) * factor;
    }
}
