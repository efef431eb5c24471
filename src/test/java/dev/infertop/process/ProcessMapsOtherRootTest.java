package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.infertop.ffi.LibC;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A target whose files exist only in its own mount namespace, as in a container: sleep, chrooted into an overlay
 * that a private mount namespace alone has mounted. The kernel prints its mappings from the mount point's host-side
 * path (…/merged/bin/sleep), which on the host is an empty directory; {@link ProcessMaps#of} must give paths that
 * open the very files mapped (device and inode), through /proc/PID/root.
 */
class ProcessMapsOtherRootTest {
    private static final Pattern LDD_PATH = Pattern.compile("(?:=> )?(/\\S+) \\(0x[0-9a-f]+\\)");
    private static final long START_TIMEOUT_MS = 10_000;

    @TempDir
    Path dir;

    /** The absolute paths of the files {@code ldd} says {@code executable} loads (libraries and ld.so). */
    private static List<String> loadedFiles(Path executable) throws Exception {
        List<String> files = new ArrayList<>();
        for (String line : TestTools.run("ldd", executable.toString()).split("\n")) {
            Matcher m = LDD_PATH.matcher(line.strip());
            if (m.find()) {
                files.add(m.group(1));
            }
        }
        return files;
    }

    private static void copyInto(Path tree, String absolute) throws Exception {
        Path to = tree.resolve(absolute.substring(1));
        Files.createDirectories(to.getParent());
        Files.copy(Path.of(absolute), to, StandardCopyOption.COPY_ATTRIBUTES); // follows links: the file itself
    }

    private static String rawMaps(long pid) throws Exception {
        try (InputStream in = Files.newInputStream(Path.of("/proc", Long.toString(pid), "maps"))) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void filesOfATargetOnAnOverlayOnlyItsNamespaceMountsOpenUnderProcPidRoot() throws Exception {
        TestTools.requireOrSkip(LibC.geteuid() == 0, "mounting an overlay in a new mount namespace needs root");
        TestTools.requireOrSkip(Files.isExecutable(Path.of("/usr/bin/unshare")) && Files.isExecutable(
                Path.of("/usr/sbin/chroot")), "needs unshare and chroot (util-linux, coreutils)");
        Path lower = Files.createDirectories(dir.resolve("lower"));
        Path upper = Files.createDirectories(dir.resolve("upper"));
        Path work = Files.createDirectories(dir.resolve("work"));
        Path merged = Files.createDirectories(dir.resolve("merged"));
        copyInto(lower, "/bin/sleep");
        List<String> libraries = loadedFiles(Path.of("/bin/sleep"));
        assertTrue(libraries.stream().anyMatch(l -> l.contains("ld-linux")), "ldd /bin/sleep: " + libraries);
        for (String library : libraries) {
            copyInto(lower, library);
        }
        Path log = dir.resolve("unshare.log");
        Process target = new ProcessBuilder("/usr/bin/unshare", "--mount", "--propagation", "private", "--",
                "/bin/sh", "-c", "mount -t overlay overlay -o lowerdir=\"$1\",upperdir=\"$2\",workdir=\"$3\" \"$4\""
                + " && exec /usr/sbin/chroot \"$4\" /bin/sleep 30", "sh", lower.toString(), upper.toString(),
                work.toString(), merged.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long pid = target.pid(); // unshare, sh and chroot exec in turn: the same process ends as sleep
            String root = "/proc/" + pid + "/root";
            ProcessMaps maps = null;
            long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
            while (System.currentTimeMillis() < deadline && target.isAlive()) {
                ProcessMaps now = ProcessMaps.of(pid);
                if (now.mappedLibraries().stream().anyMatch(m -> m.path().endsWith("/bin/sleep"))) {
                    maps = now;
                    break;
                }
                Thread.sleep(20);
            }
            TestTools.requireOrSkip(maps != null, "sleep did not start in an overlay of its own mount namespace: "
                    + (target.isAlive() ? "still starting" : "exit " + target.waitFor()) + ", "
                    + Files.readString(log).strip());
            String raw = rawMaps(pid);

            TreeSet<String> expected = new TreeSet<>();
            expected.add(root + "/bin/sleep");
            libraries.forEach(l -> expected.add(root + l));
            TreeSet<String> got = new TreeSet<>();
            for (MemoryMapping mapping : maps.mappedLibraries()) {
                got.add(mapping.path());
                Path file = Path.of(mapping.path());
                assertTrue(Files.isRegularFile(file), mapping + "\nraw maps:\n" + raw);
                long dev = ((Number) Files.getAttribute(file, "unix:dev")).longValue();
                long inode = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
                assertEquals(mapping.device() + " " + mapping.inode(),
                        MemoryMapping.deviceAsMapsPrintsIt(dev) + " " + inode, "device and inode of " + file);
            }
            assertEquals(expected, got, "mapped files, made openable; raw maps:\n" + raw);

            MemoryMapping sleep = maps.mappedLibraries().stream().filter(m -> m.path().endsWith("/bin/sleep"))
                    .findFirst().orElseThrow();
            assertTrue(sleep.path().startsWith(root + "/"), sleep.path());
            // what made it necessary: the path as printed names nothing on the host (an empty mount point there),
            // and the copy in the lower directory, same inode, is another device than the overlay's
            MemoryMapping printed = ProcessMaps.parse("raw", raw).mappedLibraries().stream()
                    .filter(m -> m.path().endsWith("/bin/sleep")).findFirst().orElseThrow();
            assertEquals(merged + "/bin/sleep", printed.path(), "the kernel prints the mount point's host-side path");
            assertFalse(Files.exists(Path.of(printed.path())), printed.path() + " exists on the host");
            Path inLower = lower.resolve("bin/sleep");
            assertFalse(printed.isFile(((Number) Files.getAttribute(inLower, "unix:dev")).longValue(),
                    ((Number) Files.getAttribute(inLower, "unix:ino")).longValue()), "the lower copy is the mapped file");
            assertEquals(sleep.path(), ProcessMaps.openablePath(pid, printed));
        } finally {
            target.destroyForcibly(); // its mount namespace, and the overlay, go with it
            target.waitFor();
        }
    }
}
