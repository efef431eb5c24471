package dev.infertop.process;

import dev.infertop.ffi.LibC;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The cgroup a launched command and a calibration child run in, for real (root, a writable cgroup hierarchy):
 * its task limit holds a fork loop, and closing it ends every member, a daemon that left its session included.
 */
class TreeCgroupTest {
    @Test
    void itsTaskLimitHoldsAndClosingEndsEveryMember() throws Exception {
        boolean usable = LibC.geteuid() == 0 && (Files.isWritable(Path.of("/sys/fs/cgroup/pids"))
                || Files.isWritable(Path.of("/sys/fs/cgroup/cgroup.procs")));
        if (!usable) {
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail("cannot run in CI: needs root and a writable pids cgroup hierarchy");
            }
            Assumptions.abort("needs root and a writable pids cgroup hierarchy");
        }
        TreeCgroup cgroup = TreeCgroup.create(ProcessHandle.current().pid(),
                "infertop-test-tree-" + ProcessHandle.current().pid(), 8, 64L << 20);
        Process shell = new ProcessBuilder("/bin/sh", "-c",
                "read go; i=0; while [ $i -lt 20 ]; do setsid sleep 300 & i=$((i+1)); done; sleep 300")
                .redirectErrorStream(true).start();
        try {
            assertTrue(cgroup.holdsTree(), cgroup.description());
            assertTrue(cgroup.add(shell.pid()), cgroup.description());
            try (OutputStream go = shell.getOutputStream()) {
                go.write('\n');
            }
            List<Path> procs = cgroup.procsFiles();
            long members = 0;
            for (int i = 0; i < 100; i++) {
                members = Files.readAllLines(procs.getFirst()).size();
                Thread.sleep(50);
            }
            assertTrue(members > 1 && members <= 8, "at most 8 tasks: " + members + " in " + cgroup.description());
            List<ProcessHandle> tree = shell.descendants().toList();
            cgroup.close();
            assertTrue(shell.waitFor(10, TimeUnit.SECONDS), "the shell is killed");
            for (ProcessHandle member : tree) {
                assertFalse(member.isAlive(), "member " + member.pid() + " outlived the cgroup");
            }
            for (Path file : procs) {
                assertFalse(Files.exists(file.getParent()), file.getParent() + " removed");
            }
        } finally {
            shell.destroyForcibly();
            cgroup.close();
        }
    }
}
