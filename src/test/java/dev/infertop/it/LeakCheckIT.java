package dev.infertop.it;

import dev.infertop.cli.JvmOptions;
import dev.infertop.ffi.BpfSyscall;
import dev.infertop.ffi.LibC;
import dev.infertop.ffi.UprobeMultiSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leak check holds a test to what its own infertop left: the probes of another infertop running on the
 * machine (a user's, another suite's: started outside this JVM's process tree) are not this test's leak, while
 * this test's own are, as long as they are held.
 */
class LeakCheckIT {
    private static Path bench;
    private static Path tinyModel;

    @BeforeAll
    static void requirements() throws Throwable {
        bench = Requirements.canTraceLlamaCpp().sourceBuildTool("llama-bench");
        tinyModel = Models.preset("tiny");
    }

    @Test
    void anotherInfertopsProbesAreNotThisTestsLeakButOurOwnAre() throws Exception {
        Process target = new ProcessBuilder(bench.toString(), "-m", tinyModel.toString(), "-p", "0", "-n", "0",
                "-pg", "32,32", "-r", "100000", "-t", "1").redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Path log = Files.createTempFile("infertop-other-", ".log");
        Path pidFile = Files.createTempFile("infertop-other-", ".pid");
        long other = -1;
        try {
            LlamaBenchIT.awaitMapped(target.pid(), 10, "libllama.");
            // setsid -f forks: the infertop it runs is reparented away from this JVM, as another user's would be.
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> command = new ArrayList<>(List.of("setsid", "-f", "/bin/sh", "-c",
                    "echo $$ > \"$1\"; shift; exec \"$@\" >/dev/null 2>\"$0\" </dev/null", log.toString(),
                    pidFile.toString(), java));
            command.addAll(JvmOptions.forLauncher());
            command.addAll(List.of("-jar", Requirements.jar().toString(), "--json", "-d", "0.5", "-p",
                    Long.toString(target.pid())));
            assertEquals(0, new ProcessBuilder(command).start().waitFor(), "setsid -f did not start infertop");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (!Files.readString(log).contains("probes attached")) {
                assertTrue(System.nanoTime() < deadline, "the other infertop did not attach; its stderr:\n"
                        + Files.readString(log));
                Thread.sleep(200);
            }
            other = Long.parseLong(Files.readString(pidFile).strip());
            long otherPid = other;
            assertFalse(ProcessHandle.current().descendants().anyMatch(p -> p.pid() == otherPid),
                    "the other infertop is still in this JVM's process tree");

            assertEquals(List.of(), LeakCheck.findLeaks(), "another infertop's probes were called this test's leak");

            try (InfertopProcess ours = InfertopProcess.start("--json", "-d", "0.5", "-p", Long.toString(target.pid()))) {
                ours.awaitStderr("probes attached", 90);
                List<String> held = LeakCheck.findLeaks();
                assertFalse(held.isEmpty(), "this test's own running infertop holds probes, but none were found");
                assertTrue(held.stream().noneMatch(l -> Pattern.compile("pid " + otherPid + "\\b").matcher(l).find()),
                        "the other infertop's probes were among this test's: " + held);
            }
            LeakCheck.assertNothingLeft();
        } finally {
            if (other > 0) {
                ProcessHandle.of(other).ifPresent(ProcessHandle::destroy);
                long otherPid = other;
                ProcessHandle.of(otherPid).ifPresent(p -> p.onExit().orTimeout(30, TimeUnit.SECONDS).exceptionally(e -> {
                    p.destroyForcibly();
                    return p;
                }).join());
            }
            target.destroyForcibly();
            target.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(log);
            Files.deleteIfExists(pidFile);
        }
    }

    /** An uprobe-multi link is in no {@code bpftool perf show}: one held by this JVM is a leak all the same. */
    @Test
    void aHeldUprobeMultiLinkIsALeak() throws Exception {
        Requirements.require(UprobeMultiSupport.available(), "needs uprobe-multi links (Linux 6.6+): "
                + UprobeMultiSupport.verdict().line());
        int program = BpfSyscall.loadEmptyKprobeProgram(
                BpfSyscall.BPF_TRACE_UPROBE_MULTI);
        assertTrue(program >= 0, "errno " + -program);
        try {
            // In a file this JVM does not map, filtered to this JVM: no process gets a breakpoint.
            int link = BpfSyscall.createUprobeMultiLink(program, "/bin/true", new long[] {0, 1},
                    false, (int) ProcessHandle.current().pid());
            assertTrue(link >= 0, "errno " + -link);
            try {
                List<String> leaks = LeakCheck.findLeaks();
                assertTrue(leaks.stream().anyMatch(l -> l.startsWith("uprobe-multi link ")
                        && l.contains("/bin/true") && l.contains("2 offsets")
                        && l.contains("pid " + ProcessHandle.current().pid())), leaks.toString());
            } finally {
                LibC.closeQuietly(link);
            }
            assertFalse(LeakCheck.findLeaks().stream().anyMatch(l -> l.contains("/bin/true")), "closed: gone");
        } finally {
            LibC.closeQuietly(program);
        }
    }
}
