package dev.infertop.it;

import dev.infertop.workload.LlamaCppWorkload;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Debian sid's llama.cpp packages in a root of their own (src/scripts/provision-distro-llama.sh), run as a
 * container runtime runs them (src/scripts/container-run.sh): own mount and PID namespaces, the root as an
 * overlay only those namespaces see, the test models bind-mounted at /models.
 */
final class Containers {
    private Containers() {}

    static final Path RUNNER = Path.of("src/scripts/container-run.sh");

    /** The provisioned root (skips locally, fails in CI, without it). */
    static Path debianRoot() {
        Path dir = LlamaCppWorkload.cacheDir().resolve("llama.cpp-debian-sid");
        Requirements.require(Files.exists(dir.resolve("root.stamp")),
                "needs Debian sid's llama.cpp in a root of its own: run src/scripts/provision-distro-llama.sh"
                        + " (setup.sh does)");
        return dir.resolve("root");
    }

    /** What the provisioning recorded: "llama.cpp-tools 1:0.7.0+dfsg-2 ..." on one line. */
    static String debianVersions() {
        try {
            return String.join(", ", Files.readAllLines(debianRoot().getParent().resolve("versions.txt")));
        } catch (IOException e) {
            return "(versions unknown: " + e.getMessage() + ")";
        }
    }

    /** The root's file for a path inside it ("/usr/lib/x86_64-linux-gnu/libllama.so.0"), links resolved. */
    static Path hostFile(Path root, String pathInRoot) throws IOException {
        Path file = root.resolve(pathInRoot.substring(1));
        while (Files.isSymbolicLink(file)) {
            Path link = Files.readSymbolicLink(file);
            file = link.isAbsolute() ? root.resolve(link.toString().substring(1)) : file.resolveSibling(link);
        }
        return file.normalize();
    }

    /** Starts {@code command} from {@code root} in a container, {@code models} at /models; options before ROOT. */
    static Process start(Path root, Path models, List<String> runnerOptions, String... command) throws IOException {
        List<String> argv = new ArrayList<>(List.of("bash", RUNNER.toString(), "--models", models.toString()));
        argv.addAll(runnerOptions);
        argv.add(root.toString());
        argv.add("--");
        argv.addAll(List.of(command));
        return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    /**
     * The pid (as the host sees it) of the process named {@code comm} that the container started by
     * {@code runner} runs, once it maps code of a file containing each of {@code mapped}; polled every
     * millisecond, so a caller can stop it before its first llama_process call.
     */
    static long awaitTool(Process runner, String comm, long timeoutSeconds, String... mapped) throws Exception {
        return awaitTool(runner, comm, timeoutSeconds, List.of(mapped), List.of());
    }

    /**
     * {@link #awaitTool(Process, String, long, String...)}, once it also maps (any way) a file containing each of
     * {@code files}: the model file, mapped after ggml has loaded every CPU variant to score it and kept the best
     * (the first variant mapped is often one about to be unloaded).
     */
    static long awaitTool(Process runner, String comm, long timeoutSeconds, List<String> mapped, List<String> files)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            Optional<ProcessHandle> tool = runner.toHandle().descendants()
                    .filter(p -> comm.equals(comm(p.pid()))).findFirst();
            if (tool.isPresent()) {
                try {
                    // Executable mappings only: a library being dlopen'ed shows its first, read-only segment a
                    // moment before its code (infertop probes only what is mapped executable).
                    List<String> lines = Files.readAllLines(Path.of("/proc/" + tool.get().pid() + "/maps"));
                    List<String> code = lines.stream()
                            .filter(line -> line.split("\\s+").length > 1 && line.split("\\s+")[1].contains("x"))
                            .toList();
                    if (mapped.stream().allMatch(m -> code.stream().anyMatch(l -> l.contains(m)))
                            && files.stream().allMatch(f -> lines.stream().anyMatch(l -> l.contains(f)))) {
                        return tool.get().pid();
                    }
                } catch (IOException e) {
                    // not readable yet
                }
            }
            if (!runner.isAlive()) {
                throw new AssertionError("the container exited (" + runner.exitValue() + ") before " + comm + " ran");
            }
            Thread.onSpinWait(); // no sleep: a loaded machine's timer slack would let the tool run past its start
        }
        throw new AssertionError("no " + comm + " in the container within " + timeoutSeconds + " s");
    }

    private static String cpuVariant;

    /**
     * The CPU variant ggml loads from the root's backends directory on this machine ("libggml-cpu-haswell.so"):
     * ggml maps every variant to score it and keeps the best, so a tool is stopped once that one is mapped (the
     * first variant mapped is often one about to be unloaded). Read from the tool's own start-up line.
     */
    static synchronized String cpuVariant(Path root, Path models) throws Exception {
        if (cpuVariant == null) {
            List<String> argv = List.of("bash", RUNNER.toString(), "--models", models.toString(), root.toString(), "--",
                    "/usr/bin/llama-bench", "--help");
            Process help = new ProcessBuilder(argv).redirectErrorStream(true).start();
            String output = new String(help.getInputStream().readAllBytes());
            help.waitFor(60, TimeUnit.SECONDS);
            java.util.regex.Matcher loaded = java.util.regex.Pattern
                    .compile("loaded CPU backend from \\S*/(libggml-cpu-[^/\\s]+\\.so)").matcher(output);
            if (!loaded.find()) {
                throw new AssertionError("llama-bench --help in the container named no CPU backend:\n" + output);
            }
            cpuVariant = loaded.group(1);
        }
        return cpuVariant;
    }

    private static final java.lang.invoke.MethodHandle KILL = java.lang.foreign.Linker.nativeLinker().downcallHandle(
            java.lang.foreign.Linker.nativeLinker().defaultLookup().find("kill").orElseThrow(),
            java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_INT,
                    java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT));

    /** kill(2) at once (a `kill` command takes tens of milliseconds to start on a loaded machine). */
    static void signal(long pid, int signal) {
        try {
            int rc = (int) KILL.invokeExact((int) pid, signal);
            if (rc != 0) {
                throw new AssertionError("kill(" + pid + ", " + signal + ") failed");
            }
        } catch (Throwable t) {
            throw new AssertionError("kill(" + pid + ", " + signal + "): " + t, t);
        }
    }

    static final int SIGSTOP = 19;
    static final int SIGCONT = 18;

    static String comm(long pid) {
        try {
            return Files.readString(Path.of("/proc/" + pid + "/comm")).strip();
        } catch (IOException e) {
            return "";
        }
    }

    /** Kills the container (the runner's --kill-child takes its command along) and waits for it. */
    static void stop(Process runner) throws InterruptedException {
        if (runner == null) {
            return;
        }
        List<ProcessHandle> inside = runner.toHandle().descendants().toList();
        runner.destroy();
        if (!runner.waitFor(10, TimeUnit.SECONDS)) {
            runner.destroyForcibly();
            runner.waitFor(10, TimeUnit.SECONDS);
        }
        for (ProcessHandle process : inside) {
            process.destroyForcibly();
        }
    }
}
