package dev.infertop.it;

import dev.infertop.cli.JvmOptions;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * infertop run as a user runs it: a separate JVM on the packaged jar. Collects stdout and stderr lines as
 * they arrive so a test can wait for a line (e.g. "probes attached") and then act.
 */
final class InfertopProcess implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    final Process process;
    final List<String> stdout = Collections.synchronizedList(new ArrayList<>());
    final List<String> stderr = Collections.synchronizedList(new ArrayList<>());

    private final List<Thread> pumps = new ArrayList<>();

    private InfertopProcess(Process process) {
        this.process = process;
        pumps.add(pump(process.inputReader(StandardCharsets.UTF_8), stdout));
        pumps.add(pump(new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8)),
                stderr));
    }

    static InfertopProcess start(Map<String, String> environment, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(JvmOptions.forLauncher()); // the JVM src/scripts/infertop runs
        command.addAll(List.of("-jar", Requirements.jar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(environment);
        return new InfertopProcess(builder.start());
    }

    /**
     * {@code --env NAME=VALUE} for each variable: a launched command gets only these of the caller's environment
     * (and PATH, TERM, LANG, HOME, USER, LOGNAME).
     */
    static List<String> env(Map<String, String> variables) {
        List<String> options = new ArrayList<>();
        variables.forEach((name, value) -> options.addAll(List.of("--env", name + "=" + value)));
        return options;
    }

    static InfertopProcess start(String... args) throws IOException {
        return start(Map.of(), args);
    }

    /**
     * infertop started as a script's background job is: with {@code signals} (INT, HUP) ignored, through a shell
     * that sets them so and execs the JVM (an ignored disposition survives exec; the pid stays the JVM's).
     */
    static InfertopProcess startIgnoring(List<String> signals, String... args) throws IOException {
        return startThroughShell("trap '' " + String.join(" ", signals), args);
    }

    /** infertop started from a shell whose umask is {@code umask} (e.g. "022", a login shell's usual one). */
    static InfertopProcess startWithUmask(String umask, String... args) throws IOException {
        return startThroughShell("umask " + umask, args);
    }

    /** infertop started by a shell that runs {@code setup} and then execs the JVM (the pid stays the JVM's). */
    private static InfertopProcess startThroughShell(String setup, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of("/bin/sh", "-c",
                setup + "; exec \"$@\"", "sh", java));
        command.addAll(JvmOptions.forLauncher());
        command.addAll(List.of("-jar", Requirements.jar().toString()));
        command.addAll(List.of(args));
        return new InfertopProcess(new ProcessBuilder(command).start());
    }

    private static Thread pump(BufferedReader reader, List<String> into) {
        return Thread.ofVirtual().start(() -> {
            try (reader) {
                String line;
                while ((line = reader.readLine()) != null) {
                    into.add(line);
                }
            } catch (IOException e) {
                // stream closed with the process
            }
        });
    }

    int waitFor(long timeoutSeconds) throws InterruptedException {
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("infertop did not exit within " + timeoutSeconds + " s; stderr:\n" + stderrText());
        }
        for (Thread pump : pumps) {
            pump.join(5000); // every line read: the pumps end at the end of their stream
        }
        return process.exitValue();
    }

    /** Waits until a stderr line contains {@code text}; fails with what was printed if it never comes. */
    void awaitStderr(String text, long timeoutSeconds) throws InterruptedException {
        awaitLine(stderr, text, timeoutSeconds);
    }

    void awaitStdout(String text, long timeoutSeconds) throws InterruptedException {
        awaitLine(stdout, text, timeoutSeconds);
    }

    /** Waits until a JSON line on stdout satisfies {@code test} ({@code what} names it in the failure). */
    void awaitJson(String what, java.util.function.Predicate<JsonNode> test, long timeoutSeconds)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        int checked = 0;
        while (System.nanoTime() < deadline) {
            List<String> fresh;
            synchronized (stdout) {
                fresh = new ArrayList<>(stdout.subList(checked, stdout.size()));
            }
            for (String line : fresh) {
                checked++;
                try {
                    if (test.test(JSON.readTree(line))) {
                        return;
                    }
                } catch (IOException notJson) {
                    // a line that is no JSON object satisfies nothing
                }
            }
            if (!process.isAlive() && fresh.isEmpty()) {
                Thread.sleep(200); // the pump may still be handing on the last lines
                synchronized (stdout) {
                    if (stdout.size() > checked) {
                        continue;
                    }
                }
                throw new AssertionError("infertop exited (" + process.exitValue() + ") before a line with " + what
                        + "; stderr:\n" + stderrText());
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no line with " + what + " within " + timeoutSeconds + " s; stderr:\n" + stderrText());
    }

    private void awaitLine(List<String> lines, String text, long timeoutSeconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (System.nanoTime() < deadline) {
            synchronized (lines) {
                if (lines.stream().anyMatch(l -> l.contains(text))) {
                    return;
                }
            }
            if (!process.isAlive()) {
                Thread.sleep(100);
                synchronized (lines) {
                    if (lines.stream().anyMatch(l -> l.contains(text))) {
                        return;
                    }
                }
                throw new AssertionError("infertop exited (" + process.exitValue() + ") before printing '" + text
                        + "'; stderr:\n" + stderrText());
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no '" + text + "' within " + timeoutSeconds + " s; stderr:\n" + stderrText());
    }

    String stderrText() {
        synchronized (stderr) {
            return String.join("\n", stderr);
        }
    }

    List<JsonNode> jsonLines() throws IOException {
        List<JsonNode> objects = new ArrayList<>();
        synchronized (stdout) {
            for (String line : stdout) {
                objects.add(JSON.readTree(line));
            }
        }
        return objects;
    }

    /** The last JSON object, which must be the final one. */
    JsonNode finalObject() throws IOException {
        List<JsonNode> objects = jsonLines();
        if (objects.isEmpty() || !objects.getLast().path("final").asBoolean()) {
            throw new AssertionError("no final JSON object; stdout:\n" + String.join("\n", stdout) + "\nstderr:\n" + stderrText());
        }
        return objects.getLast();
    }

    /** llama-bench's mean and stddev t/s for a test name such as "tg32", from its markdown table on stderr. */
    double[] llamaBenchMeanAndStddev(String test) {
        Pattern row = Pattern.compile("\\|\\s*" + Pattern.quote(test) + "\\s*\\|\\s*([0-9.]+)\\s*±\\s*([0-9.]+)\\s*\\|");
        synchronized (stderr) {
            for (String line : stderr) {
                Matcher matcher = row.matcher(line);
                if (matcher.find()) {
                    return new double[] {Double.parseDouble(matcher.group(1)), Double.parseDouble(matcher.group(2))};
                }
            }
        }
        throw new AssertionError("llama-bench printed no " + test + " row; stderr:\n" + stderrText());
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
