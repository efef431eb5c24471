package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessMapsTest {
    private static final String SYNTHETIC = """
            55d0c0a00000-55d0c0a2c000 r--p 00000000 fd:01 1311                       /opt/llama/bin/llama-bench
            55d0c0a2c000-55d0c0b00000 r-xp 0002c000 fd:01 1311                       /opt/llama/bin/llama-bench
            55d0c1d7a000-55d0c1dd1000 rw-p 00000000 00:00 0                          [heap]
            7f0a10000000-7f0a10021000 rw-p 00000000 00:00 0\s
            7f0a12000000-7f0a12016000 r--p 00000000 fd:01 2048                       /opt/llama/lib/libggml-base.so
            7f0a12016000-7f0a120a7000 r-xp 00016000 fd:01 2048                       /opt/llama/lib/libggml-base.so
            7f0a120a7000-7f0a120cb000 r--p 000a7000 fd:01 2048                       /opt/llama/lib/libggml-base.so
            7f0a13000000-7f0a13090000 r-xp 00013000 fd:01 4096                       /opt/llama/lib/libggml-cpu-haswell.so (deleted)
            7f0a14000000-7f0a14100000 r-xp 00000000 fd:01 5120                       /opt/my models/libllama.so
            7f0a15000000-7f0a15200000 r--s 00000000 fd:01 6144                       /models/qwen.gguf
            7ffd2c1b8000-7ffd2c1d9000 rw-p 00000000 00:00 0                          [stack]
            7ffd2c1f4000-7ffd2c1f6000 r-xp 00000000 00:00 0                          [vdso]
            ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
            """;

    @TempDir
    Path dir;

    @Test
    void parsesEveryKindOfLine() throws Exception {
        List<MemoryMapping> mappings = ProcessMaps.parse("synthetic", SYNTHETIC).mappings();
        assertEquals(13, mappings.size());

        MemoryMapping code = mappings.get(1);
        assertEquals(0x55d0c0a2c000L, code.start());
        assertEquals(0x55d0c0b00000L, code.end());
        assertEquals("r-xp", code.permissions());
        assertEquals(0x2c000, code.fileOffset());
        assertEquals("fd:01", code.device());
        assertEquals(1311, code.inode());
        assertEquals("/opt/llama/bin/llama-bench", code.path());
        assertTrue(code.isExecutable() && code.isFileBacked() && !code.deleted());

        assertTrue(mappings.get(2).isPseudo());
        assertTrue(mappings.get(3).isAnonymous(), "trailing blank after inode 0 still means anonymous");
        MemoryMapping deleted = mappings.get(7);
        assertTrue(deleted.deleted());
        assertEquals("/opt/llama/lib/libggml-cpu-haswell.so", deleted.path());
        assertEquals("/opt/my models/libllama.so", mappings.get(8).path());
        MemoryMapping vdso = mappings.get(11);
        assertTrue(vdso.isPseudo() && vdso.isExecutable() && !vdso.isFileBacked());
        assertEquals(0xffffffffff601000L, mappings.get(12).end(), "addresses above Long.MAX_VALUE parse unsigned");
    }

    @Test
    void mappedLibrariesAreTheDistinctLiveExecutableFiles() throws Exception {
        ProcessMaps maps = ProcessMaps.parse("synthetic", SYNTHETIC);
        assertEquals(List.of("/opt/llama/bin/llama-bench", "/opt/llama/lib/libggml-base.so", "/opt/my models/libllama.so"),
                maps.mappedLibraries().stream().map(MemoryMapping::path).toList());
        assertEquals(0x7f0a12016000L, maps.findLibraries(p -> p.contains("libggml")).getFirst().start());
        assertTrue(maps.findLibraries(p -> p.endsWith(".gguf")).isEmpty(), "a mapped model is data, not code");
    }

    @Test
    void malformedLineIsNamed() {
        TargetException e = assertThrows(TargetException.class,
                () -> ProcessMaps.parse("/proc/1/maps", "55d0c0a00000-55d0c0a2c000 r--p zz fd:01 1311 /x\n"));
        assertEquals("malformed line 1 of /proc/1/maps: 55d0c0a00000-55d0c0a2c000 r--p zz fd:01 1311 /x", e.getMessage());
    }

    @Test
    void missingProcessIsNamed() throws Exception {
        // Linux never hands out PIDs above PID_MAX_LIMIT (2^22)
        long beyondPidMax = (1L << 22) + 1;
        TargetException e = assertThrows(TargetException.class, () -> ProcessMaps.of(beyondPidMax));
        assertEquals("no such process: " + beyondPidMax, e.getMessage());
    }

    @Test
    void readsARunningSleep() throws Exception {
        Process sleep = new ProcessBuilder("sleep", "60").start();
        try {
            ProcessMaps maps = mapsOnceLoaded(sleep.pid(), "/libc.so.6");
            List<String> libraries = maps.mappedLibraries().stream().map(MemoryMapping::path).toList();
            assertTrue(libraries.stream().anyMatch(p -> p.endsWith("/sleep")), libraries.toString());
            assertEquals(1, maps.findLibraries(p -> p.endsWith("/libc.so.6")).size(), libraries.toString());
            assertTrue(maps.mappings().stream().anyMatch(MemoryMapping::isPseudo), "[stack], [vdso], …");
            // /lib/x86_64-linux-gnu is a symlink into /usr/lib on merged-/usr systems: matched by real path
            assertEquals(List.of(TestTools.LIBC),
                    maps.mappedAmong(List.of(TestTools.LIBC, dir.resolve("libnot-there.so"))));
        } finally {
            sleep.destroy();
        }
    }

    @Test
    void noticesALibraryDlopenedLater() throws Exception {
        Path library = TestTools.compileTinyLibrary(dir, true);
        // python3 stands in for ggml's backend loader: it dlopens the library when told to
        String script = "import sys, os, ctypes\nprint('ready', flush=True)\nsys.stdin.readline()\nctypes.CDLL(sys.argv[1], mode=os.RTLD_LAZY)\n"
                + "print('loaded', flush=True)\nsys.stdin.readline()\n";
        Process python;
        try {
            python = new ProcessBuilder("python3", "-c", script, library.toString()).start();
        } catch (java.io.IOException e) {
            TestTools.requireOrSkip(false, "python3 absent: cannot dlopen from a test process");
            return;
        }
        try (OutputStream stdin = python.getOutputStream();
             BufferedReader stdout = new BufferedReader(new InputStreamReader(python.getInputStream(), StandardCharsets.UTF_8))) {
            assertEquals("ready", stdout.readLine());
            assertTrue(LibraryResolver.mappedBy(python.pid(), List.of(library)).isEmpty());
            stdin.write('\n');
            stdin.flush();
            assertEquals("loaded", stdout.readLine());
            assertEquals(List.of(library), LibraryResolver.mappedBy(python.pid(), List.of(library)));
            assertFalse(ProcessMaps.of(python.pid()).findLibraries(p -> p.endsWith("libtiny-cf.so")).isEmpty());
        } finally {
            python.destroy();
        }
    }

    /** A just-started process maps its libraries a moment after exec: wait until a library path containing {@code pathPart} shows. */
    private static ProcessMaps mapsOnceLoaded(long pid, String pathPart) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            ProcessMaps maps = ProcessMaps.of(pid);
            if (!maps.findLibraries(p -> p.contains(pathPart)).isEmpty() || System.nanoTime() > deadline) {
                return maps;
            }
            Thread.sleep(10);
        }
    }
}
