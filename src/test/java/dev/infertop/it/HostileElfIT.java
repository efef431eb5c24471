package dev.infertop.it;

import dev.infertop.ffi.LibC;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A traced process maps libraries whose files are hostile (issue 14, point 3): infertop attaches to it, skips
 * each such library with one line, traces what is left, and ends on time with nothing left in the kernel.
 *
 * <p>The libraries are real gcc-built shared objects that the dynamic loader accepts (it reads program
 * headers and .dynamic, never section headers); one section header field of each is then made hostile, as a
 * user who owns a library a profiled process maps could: a .plt sh_entsize of 2^32 (it once made the stub scan
 * loop forever holding the probe-set lock), a .symtab claiming 2^40 bytes, a .dynsym past the end of the file.
 * A fourth library is, after the process mapped it, replaced under its path by a FIFO (a bind mount: the maps
 * still name the path, which now opens a FIFO with no writer; opening it the ordinary way blocks forever),
 * and a fifth by another regular file (what a symbolic link swapped in gives: root would read any file): both
 * are read through /proc/PID/map_files, as the process maps them, and neither replacement is ever opened.
 */
class HostileElfIT {
    private static final int SH_OFFSET = 0x18, SH_SIZE = 0x20, SH_ENTSIZE = 0x38;

    @TempDir
    Path dir;

    private static final String LIBRARY = """
            extern long sink(long);
            long sink(long x) { return x ^ 0x55; }
            __attribute__((noinline)) long barrier_like(long x) { return sink(x) + 1; }
            long work(long x) { return barrier_like(x) * 2 + sink(x); }
            /* A token-layer probe site, so that the session has something to attach to. */
            int llama_decode(void *ctx, void *batch) { return ctx == batch; }
            """;

    private static final String HOST = """
            #include <dlfcn.h>
            #include <stdio.h>
            #include <unistd.h>
            int main(int argc, char **argv) {
                for (int i = 1; i < argc; i++) {
                    if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
                        fprintf(stderr, "dlopen %s: %s\\n", argv[i], dlerror());
                        return 1;
                    }
                }
                printf("ready\\n");
                fflush(stdout);
                for (;;) pause();
            }
            """;

    private Path compile(String source, String output, String... flags) throws Exception {
        return Gcc.compile(dir, source, output, flags);
    }

    /** {@code library} with one 8-byte field of section {@code name}'s header set to {@code value}. */
    private static Path patchSection(Path library, String name, int field, long value) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(library)).order(ByteOrder.LITTLE_ENDIAN);
        long headers = bytes.getLong(0x28);
        int entrySize = Short.toUnsignedInt(bytes.getShort(0x3a));
        int count = Short.toUnsignedInt(bytes.getShort(0x3c));
        long names = bytes.getLong((int) (headers + (long) Short.toUnsignedInt(bytes.getShort(0x3e)) * entrySize + 0x18));
        for (int i = 0; i < count; i++) {
            int at = (int) (headers + (long) i * entrySize);
            int nameAt = (int) (names + Integer.toUnsignedLong(bytes.getInt(at)));
            int end = nameAt;
            while (bytes.get(end) != 0) {
                end++;
            }
            if (new String(bytes.array(), nameAt, end - nameAt, StandardCharsets.US_ASCII).equals(name)) {
                bytes.putLong(at + field, value);
                Files.write(library, bytes.array());
                return library;
            }
        }
        throw new AssertionError(name + " not in " + library);
    }

    @Test
    void hostileLibrariesAreSkippedWithOneLineEachAndTheSessionEndsOnTime() throws Exception {
        Requirements.canTrace();
        Path clean = compile(LIBRARY, "libclean.so", "-shared", "-fPIC");
        Path entsize = patchSection(Files.copy(clean, dir.resolve("libggml-entsize.so")), ".plt", SH_ENTSIZE, 1L << 32);
        Path count = patchSection(Files.copy(clean, dir.resolve("libggml-count.so")), ".symtab", SH_SIZE, 1L << 40);
        Path offset = patchSection(Files.copy(clean, dir.resolve("libggml-offset.so")), ".dynsym", SH_OFFSET,
                Files.size(clean) + 4096);
        Path fifoLibrary = Files.copy(clean, dir.resolve("libggml-fifo.so"));
        Path swappedLibrary = Files.copy(clean, dir.resolve("libggml-swapped.so"));
        Path llama = Files.copy(clean, dir.resolve("libllama-fake.so"));
        Path host = compile(HOST, "hostile-host", "-ldl");

        Process target = new ProcessBuilder(host.toString(), entsize.toString(), count.toString(), offset.toString(),
                fifoLibrary.toString(), swappedLibrary.toString(), llama.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Path fifo = dir.resolve("fifo");
        Path other = Files.copy(clean, dir.resolve("another-file.so"));
        boolean mounted = false;
        boolean swapped = false;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("ready", out.readLine(), "the dynamic loader accepted the hostile libraries");
            LibC.mkfifo(fifo.toString(), 0600);
            mounted = run("mount", "--bind", fifo.toString(), fifoLibrary.toString()) == 0;
            Requirements.require(mounted, "needs root to bind-mount a FIFO over a mapped library");
            // Another file under the mapped path (as a symbolic link swapped in would be): a regular ELF,
            // but not the inode the process mapped.
            swapped = run("mount", "--bind", other.toString(), swappedLibrary.toString()) == 0;
            assertTrue(swapped, "bind-mount another file over a mapped library");
            assertTrue(Files.readString(Path.of("/proc", Long.toString(target.pid()), "maps"))
                    .contains(fifoLibrary + "\n"), "the maps still name the library's path, not deleted");

            long started = System.nanoTime();
            List<String> stderr;
            int status;
            try (InfertopProcess infertop = InfertopProcess.start(Map.of(), "--batch", "-n", "2", "-d", "0.5",
                    "--layers", "token", "-p", Long.toString(target.pid()))) {
                status = infertop.waitFor(90);
                stderr = List.copyOf(infertop.stderr);
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            String shown = "\nstderr:\n" + String.join("\n", stderr);
            System.out.println("infertop ended in " + seconds + " s, status " + status + shown);
            assertEquals(0, status, "the session ran on the libraries left" + shown);
            assertTrue(seconds < 60, "ended in " + seconds + " s" + shown);
            assertSkippedOnce(stderr, entsize, ".plt has stubs of 4294967296 bytes");
            assertSkippedOnce(stderr, count, ".symtab (1099511627776 bytes at offset");
            assertSkippedOnce(stderr, offset, ".dynsym (");
            // Swapped under their paths, these two are read as the process maps them, through /proc/PID/map_files
            // (the file the kernel mapped, whatever the path names now): neither the FIFO nor the other file is
            // opened, so nothing blocks and nothing is skipped.
            for (Path replaced : List.of(fifoLibrary, swappedLibrary)) {
                assertTrue(stderr.stream().noneMatch(l -> l.contains(replaced.getFileName().toString())),
                        replaced + " read as mapped, through map_files" + shown);
            }
            assertTrue(stderr.stream().noneMatch(l -> l.contains("skipped a library") && l.contains(llama.toString())),
                    "the clean library is traced" + shown);
            assertTrue(stderr.stream().noneMatch(l -> l.contains("Exception") || l.contains("\tat ")),
                    "no stack trace" + shown);
        } finally {
            if (mounted) {
                run("umount", fifoLibrary.toString());
            }
            if (swapped) {
                run("umount", swappedLibrary.toString());
            }
            target.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        LeakCheck.assertNothingLeft();
    }

    /**
     * Point 8: a snapshot directory is input too. A FIFO named report.html once blocked {@code infertop report}
     * forever; a huge file would be read whole. Both are refused with one line and a non-zero exit.
     */
    @Test
    void reportRefusesAFifoAndAnOversizedFileWithOneLine() throws Exception {
        Requirements.jar();
        Path snapshot = Files.createDirectory(dir.resolve("snapshot"));
        Files.writeString(snapshot.resolve("summary.json"),
                "{\"snapshot\": {\"format\": \"infertop-snapshot\", \"version\": 1}}");
        Files.writeString(snapshot.resolve("latency.hlog"), "");
        Files.writeString(snapshot.resolve("trace.json"), "{\"traceEvents\": []}");
        LibC.mkfifo(snapshot.resolve("report.html").toString(), 0600);
        assertEquals("infertop: " + snapshot.resolve("report.html") + ": not a regular file (a FIFO)",
                reportRefusal(snapshot));

        Files.delete(snapshot.resolve("report.html"));
        Files.writeString(snapshot.resolve("report.html"), "<html></html>\n");
        try (java.io.RandomAccessFile trace = new java.io.RandomAccessFile(snapshot.resolve("trace.json").toFile(), "rw")) {
            trace.setLength((1L << 30) + 1); // sparse
        }
        assertEquals("infertop: " + snapshot.resolve("trace.json") + ": too large (1073741825 bytes, at most "
                + "1073741824 read)", reportRefusal(snapshot));
    }

    private static String reportRefusal(Path snapshot) throws Exception {
        try (InfertopProcess infertop = InfertopProcess.start("report", snapshot.toString())) {
            int status = infertop.waitFor(30);
            String shown = "\nstderr:\n" + String.join("\n", infertop.stderr);
            assertTrue(status != 0, "non-zero exit" + shown);
            assertEquals(1, infertop.stderr.size(), "one line" + shown);
            assertEquals(List.of(), infertop.stdout);
            return infertop.stderr.getFirst();
        }
    }

    private static int run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().readAllBytes();
        return process.waitFor();
    }

    private static void assertSkippedOnce(List<String> stderr, Path library, String why) {
        List<String> lines = stderr.stream()
                .filter(l -> l.startsWith("infertop: skipped a library: ") && l.contains(library.toString())).toList();
        assertEquals(1, lines.size(), "one line about " + library.getFileName() + "\nstderr:\n" + String.join("\n", stderr));
        assertTrue(lines.getFirst().contains(why), lines.getFirst());
    }
}
