package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class TargetRootTest {
    private static final TargetRoot ROOT = TargetRoot.of(12);

    @Test
    void directoryIsProcPidRoot() {
        assertEquals(Path.of("/proc/12/root"), ROOT.directory());
        assertEquals(12, ROOT.pid());
        assertEquals("/proc/9223372036854775807/root", TargetRoot.of(Long.MAX_VALUE).directory().toString());
    }

    @Test
    void hostPathPutsTheTargetsPathUnderItsRoot() {
        assertEquals("/proc/12/root/usr/lib/x86_64-linux-gnu/libggml-cpu.so",
                ROOT.hostPath("/usr/lib/x86_64-linux-gnu/libggml-cpu.so"));
        assertEquals("/proc/12/root/", ROOT.hostPath("/"));
        // a relative path is taken from the target's root, as an absolute one would be
        assertEquals("/proc/12/root/usr/lib/libllama.so", ROOT.hostPath("usr/lib/libllama.so"));
        assertEquals("/proc/12/root/", ROOT.hostPath(""));
        assertEquals("/proc/12/root/opt/my models/libllama.so", ROOT.hostPath("/opt/my models/libllama.so"));
        // a target whose own path is under another process's root: one level added, nothing stripped
        assertEquals("/proc/12/root/proc/34/root/lib/x.so", ROOT.hostPath("/proc/34/root/lib/x.so"));
    }

    @Test
    void targetPathStripsOneProcPidRoot() {
        assertEquals("/usr/lib/libggml-cpu.so", TargetRoot.targetPath("/proc/12/root/usr/lib/libggml-cpu.so"));
        assertEquals("/", TargetRoot.targetPath("/proc/12/root/"));
        assertEquals("/x", TargetRoot.targetPath("/proc/9223372036854775807/root/x"));
        assertEquals("/proc/34/root/lib/x.so", TargetRoot.targetPath("/proc/12/root/proc/34/root/lib/x.so"));
        assertEquals("/opt/my models/root/x", TargetRoot.targetPath("/proc/12/root/opt/my models/root/x"));
    }

    @Test
    void pathsThatAreNotUnderAProcessRootAreReturnedUnchanged() {
        for (String path : List.of(
                "/usr/lib/libggml-cpu.so",
                "/proc/12/rootx",            // not the root directory, a sibling name
                "/proc/12/rootx/lib/x.so",
                "/proc/12/root",             // the root itself, not a path under it
                "/proc/abc/root/x",          // not a pid
                "/proc/self/root/x",         // a pid only by the reader's own, which hostPath never makes
                "/proc//root/x",             // an empty pid
                "/proc/12/task/12/root/x",   // a thread's root: the "pid" is "12/task/12"
                "/proc/-12/root/x",
                "/proc/1 2/root/x",
                "/proc/",
                "/proc",
                "proc/12/root/x",            // relative: no leading /proc/
                "./proc/12/root/x",
                "/x/proc/12/root/y",
                "")) {
            assertEquals(path, TargetRoot.targetPath(path), path);
            assertFalse(TargetRoot.isUnderProcessRoot(path), path);
        }
    }

    @Test
    void isUnderProcessRootForWhatHostPathMakes() {
        assertTrue(TargetRoot.isUnderProcessRoot("/proc/12/root/usr/lib/x.so"));
        assertTrue(TargetRoot.isUnderProcessRoot("/proc/1/root/"));
        assertFalse(TargetRoot.isUnderProcessRoot("/usr/lib/x.so"));
    }

    @Test
    void targetPathUndoesHostPathForEveryAbsolutePath() {
        for (String path : List.of("/", "/usr/lib/x.so", "/proc/34/root/lib/x.so", "/root/x", "/proc/12/rootx",
                "/a b/c", "/usr//lib/x.so")) {
            for (long pid : List.of(1L, 12L, 4194304L, Long.MAX_VALUE)) {
                String host = TargetRoot.of(pid).hostPath(path);
                assertTrue(TargetRoot.isUnderProcessRoot(host), host);
                assertEquals(path, TargetRoot.targetPath(host), host);
            }
        }
    }
}
