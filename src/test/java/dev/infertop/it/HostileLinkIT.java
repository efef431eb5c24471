package dev.infertop.it;

import dev.infertop.ffi.LibC;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A traced process swaps the names of two libraries it mapped, over and over, with symbolic links: one to a FIFO
 * (which nothing writes), one to the slave of a pseudo-terminal it holds (a character device, as /dev/watchdog
 * is; opening a terminal without O_NOCTTY can make it the opener's controlling one). Each swap is a
 * renameat2(RENAME_EXCHANGE), so at any moment the library's file has one of two names, the maps print the one
 * it has, and that name may be a link by the time infertop opens it. The process watches the FIFO and the
 * terminal with inotify (IN_OPEN, which an O_PATH look does not raise) and prints a line for every open.
 *
 * <p>infertop used to open each library by the name the maps printed, following links (with O_NONBLOCK): it
 * opened the FIFO and the terminal many times in a session. Now it opens nothing but the file the process
 * mapped (through /proc/PID/map_files, or a name checked on an O_PATH descriptor first): nothing blocks, no
 * open is seen, and each swapped library is traced or skipped with one line.
 */
class HostileLinkIT {
    @TempDir
    Path dir;

    private static final String LIBRARY = """
            extern long sink(long);
            long sink(long x) { return x ^ 0x55; }
            /* A token-layer probe site, so that the session has something to attach to. */
            int llama_decode(void *ctx, void *batch) { return ctx == batch; }
            """;

    /** argv: the directory, the FIFO. Maps the three libraries there, then swaps names until killed. */
    private static final String HOST = """
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <fcntl.h>
            #include <pthread.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <sys/inotify.h>
            #include <unistd.h>

            static int directory;

            static void *swap_names(void *unused) {
                for (;;) {
                    renameat2(directory, "libggml-fifo.so", directory, "libggml-fifo.so.swap", RENAME_EXCHANGE);
                    renameat2(directory, "libggml-tty.so", directory, "libggml-tty.so.swap", RENAME_EXCHANGE);
                }
                return unused;
            }

            int main(int argc, char **argv) {
                const char *names[] = {"libggml-fifo.so", "libggml-tty.so", "libllama-fake.so"};
                char path[4096];
                for (int i = 0; i < 3; i++) {
                    snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
                    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
                        fprintf(stderr, "dlopen %s: %s\\n", path, dlerror());
                        return 1;
                    }
                }
                int master = posix_openpt(O_RDWR | O_NOCTTY);
                if (master < 0 || grantpt(master) || unlockpt(master)) {
                    perror("pty");
                    return 1;
                }
                const char *tty = ptsname(master);
                directory = open(argv[1], O_DIRECTORY | O_RDONLY);
                if (symlinkat(argv[2], directory, "libggml-fifo.so.swap") || symlinkat(tty, directory, "libggml-tty.so.swap")) {
                    perror("symlink");
                    return 1;
                }
                int watch = inotify_init1(IN_CLOEXEC);
                int fifo_watch = inotify_add_watch(watch, argv[2], IN_OPEN);
                int tty_watch = inotify_add_watch(watch, tty, IN_OPEN);
                if (fifo_watch < 0 || tty_watch < 0) {
                    perror("inotify");
                    return 1;
                }
                printf("ready %s\\n", tty);
                fflush(stdout);
                pthread_t swapper;
                pthread_create(&swapper, NULL, swap_names, NULL);
                char events[4096] __attribute__((aligned(8)));
                for (;;) {
                    ssize_t n = read(watch, events, sizeof events);
                    for (ssize_t at = 0; at < n;) {
                        struct inotify_event *event = (struct inotify_event *) (events + at);
                        printf("opened %s\\n", event->wd == fifo_watch ? argv[2] : tty);
                        fflush(stdout);
                        at += sizeof *event + event->len;
                    }
                }
            }
            """;

    private Path compile(String source, String output, String... flags) throws Exception {
        return Gcc.compile(dir, source, output, flags);
    }

    @Test
    void librariesSwappedForLinksToAFifoAndATerminalAreNeverOpened() throws Exception {
        Requirements.canTrace();
        Path libraries = Files.createDirectory(dir.resolve("lib"));
        Path clean = compile(LIBRARY, "libclean.so", "-shared", "-fPIC");
        for (String name : List.of("libggml-fifo.so", "libggml-tty.so", "libllama-fake.so")) {
            Files.copy(clean, libraries.resolve(name));
        }
        Path host = compile(HOST, "swapping-host", "-ldl", "-lpthread");
        Path fifo = dir.resolve("fifo");
        LibC.mkfifo(fifo.toString(), 0600);

        Process target = new ProcessBuilder(host.toString(), libraries.toString(), fifo.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        List<String> opens = Collections.synchronizedList(new ArrayList<>());
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8));
            String ready = out.readLine();
            assertTrue(ready != null && ready.startsWith("ready /dev/pts/"), "the host mapped its libraries: " + ready);
            Thread reader = Thread.ofVirtual().start(() -> {
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        opens.add(line);
                    }
                } catch (java.io.IOException e) {
                    // the host was killed
                }
            });

            long started = System.nanoTime();
            List<String> stderr;
            int status;
            try (InfertopProcess infertop = InfertopProcess.start(Map.of(), "--batch", "-n", "3", "-d", "0.5",
                    "--layers", "token,graph", "-p", Long.toString(target.pid()))) {
                status = infertop.waitFor(120);
                stderr = List.copyOf(infertop.stderr);
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            Thread.sleep(500); // an event the kernel queued at the end reaches the reader
            String shown = "\nopens seen by the target: " + opens + "\nstderr:\n" + String.join("\n", stderr);
            System.out.println("infertop ended in " + seconds + " s, status " + status + shown);
            assertEquals(List.of(), List.copyOf(opens), "infertop opened the FIFO or the terminal" + shown);
            assertEquals(0, status, "the session ran" + shown);
            assertTrue(stderr.stream().noneMatch(l -> l.contains("Exception") || l.contains("\tat ")),
                    "no stack trace" + shown);
            // A swapped library is read as the process maps it, or skipped in one line that says why.
            for (String line : stderr) {
                if (line.contains("libggml-fifo") || line.contains("libggml-tty")) {
                    assertTrue(line.startsWith("infertop: skipped a library: ") && line.contains("not a regular file"),
                            "one line, why: " + line + shown);
                }
            }
            assertTrue(stderr.stream().noneMatch(l -> l.contains("skipped a library") && l.contains("libllama-fake")),
                    "the library left alone is traced" + shown);
            reader.interrupt();
        } finally {
            target.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        LeakCheck.assertNothingLeft();
    }
}
