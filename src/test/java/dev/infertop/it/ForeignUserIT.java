package dev.infertop.it;

import dev.infertop.process.Setpriv;
import com.fasterxml.jackson.databind.JsonNode;
import dev.infertop.process.UserAccount;
import dev.infertop.workload.LlamaCppWorkload;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Processes of other users: {@code --follow} picks only the invoking user's unless {@code --any-user}, {@code -p}
 * says whose a process is, {@code --user} and sudo's SUDO_UID run the launched command as that user (probes
 * still in place from its first token), and a bad user is one line. The other user is {@code nobody}; the
 * llama-bench it runs is a copy of the provisioned one (tool, libraries, model) in a directory it can read,
 * since the cache may sit in root's private home; the copy's name is this run's own, so --follow sees no
 * other test's llama-bench.
 */
class ForeignUserIT {
    private static final int PROMPT_TOKENS = 64;
    private static final int GENERATED_TOKENS = 32;

    private static UserAccount nobody;
    private static Path setpriv;
    private static Path shared;
    private static Path bench;
    private static Path model;
    private static String name;

    @BeforeAll
    static void copyTheWorkloadWhereNobodyCanReadIt() throws IOException {
        LlamaCppWorkload workload = Requirements.canTraceLlamaCpp();
        setpriv = Path.of("/usr/bin/setpriv");
        Requirements.require(Files.isExecutable(setpriv), "needs setpriv (util-linux) to run a process as nobody");
        nobody = UserAccount.lookup("nobody").orElse(null);
        Requirements.require(nobody != null && nobody.uid() != 0, "needs the user nobody");
        Path source = workload.sourceBuildTool("llama-bench");
        shared = Files.createTempDirectory("infertop-foreign-");
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
        name = "ifu-bench-" + ProcessHandle.current().pid() % 10000; // comm keeps 15 bytes
        bench = shared.resolve(name);
        Files.copy(source, bench);
        try (Stream<Path> files = Files.list(source.getParent())) {
            for (Path library : (Iterable<Path>) files.filter(p -> p.getFileName().toString().startsWith("lib")
                    && p.getFileName().toString().contains(".so"))::iterator) {
                Files.copy(library, shared.resolve(library.getFileName()), LinkOption.NOFOLLOW_LINKS);
            }
        }
        model = shared.resolve("tiny.gguf");
        Files.copy(Models.preset("tiny"), model);
        try (Stream<Path> files = Files.list(shared)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                if (!Files.isSymbolicLink(file)) {
                    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
                }
            }
        }
    }

    @AfterAll
    static void removeTheCopy() throws IOException {
        if (shared == null) {
            return;
        }
        try (Stream<Path> files = Files.walk(shared)) {
            for (Path file : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(file);
            }
        }
    }

    /** The copy finds its libraries beside it, whatever RUNPATH the build wrote. */
    private static Map<String, String> libraryPath() {
        return Map.of("LD_LIBRARY_PATH", shared.toString());
    }

    /** llama-bench's endless prompt + generation loop (as the demo runs it) under this run's name. */
    private static List<String> endlessBench() {
        return List.of(bench.toString(), "-m", model.toString(), "-p", "0", "-n", "0", "-pg", "32,32",
                "-r", "1000000", "-t", "1", "--no-warmup");
    }

    private static Process start(boolean asNobody) throws IOException {
        List<String> argv = new ArrayList<>();
        if (asNobody) {
            argv.addAll(List.of(setpriv.toString(), "--reuid=" + nobody.uid(), "--regid=" + nobody.gid(),
                    "--clear-groups", "--"));
        }
        argv.addAll(endlessBench());
        ProcessBuilder builder = new ProcessBuilder(argv).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().putAll(libraryPath());
        return builder.start();
    }

    private static void stop(Process process) throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static long count(List<String> lines, String text) {
        synchronized (lines) {
            return lines.stream().filter(l -> l.contains(text)).count();
        }
    }

    /** The pid of "infertop: tracing pid N (...)". */
    private static long tracedPid(InfertopProcess infertop) throws InterruptedException {
        infertop.awaitStderr("infertop: tracing pid ", 120);
        Pattern tracing = Pattern.compile("infertop: tracing pid (\\d+) ");
        synchronized (infertop.stderr) {
            for (String line : infertop.stderr) {
                Matcher matcher = tracing.matcher(line);
                if (matcher.find()) {
                    return Long.parseLong(matcher.group(1));
                }
            }
        }
        throw new AssertionError("no tracing line; stderr:\n" + infertop.stderrText());
    }

    /**
     * Waits until the traced pid runs the command itself: "tracing pid" is printed once the gate opens, a moment
     * before the gate's shell has exec'd setpriv and setpriv the command.
     */
    private static void awaitCommand(long pid, String comm) throws Exception {
        Path file = Path.of("/proc/" + pid + "/comm");
        for (int attempt = 0; attempt < 500; attempt++) {
            if (Files.readString(file).strip().equals(comm)) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("pid " + pid + " never exec'd " + comm + "; it is " + Files.readString(file));
    }

    private static String statusLine(long pid, String field) throws IOException {
        return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream().filter(l -> l.startsWith(field + ":"))
                .findFirst().orElseThrow().substring(field.length() + 1).strip();
    }

    private static long tokens(JsonNode total) {
        return total.get("tokens_prefill").asLong() + total.get("tokens_decode").asLong();
    }

    @Test
    void followSkipsAnotherUsersProcessSaysSoOnceAndFollowsTheUsersOwn() throws Exception {
        Process foreign = start(true);
        Process own = null;
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-n", "2", "--follow", name)) {
            String skipped = "infertop: --follow " + name + ": skipping pid " + foreign.pid() + ", which runs as "
                    + nobody.label() + ": only processes of root (uid 0) are followed; add --any-user";
            infertop.awaitStderr(skipped, 60);
            Thread.sleep(2000); // ten more looks at /proc: still not attached, and not said again
            assertEquals(0, count(infertop.stderr, "tracing pid"), infertop.stderrText());
            assertEquals(1, count(infertop.stderr, "skipping pid"), infertop.stderrText());
            assertTrue(foreign.isAlive());

            own = start(false); // root's own process of that name: followed
            assertEquals(own.pid(), tracedPid(infertop), infertop.stderrText());
            assertEquals(0, infertop.waitFor(120), infertop.stderrText());
            assertTrue(tokens(infertop.finalObject()) > 0, "root's process traced: " + infertop.finalObject());
            assertEquals(1, count(infertop.stderr, "skipping pid"), infertop.stderrText());
            assertEquals(0, count(infertop.stderr, "not as you"), "its own process is not foreign");
        } finally {
            stop(foreign);
            stop(own);
        }
        LeakCheck.assertNothingLeft();
    }

    @Test
    void followWithAnyUserAttachesToAnotherUsersProcessAndSaysWhose() throws Exception {
        Process foreign = start(true);
        try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-n", "2", "--follow", name,
                "--any-user")) {
            assertEquals(foreign.pid(), tracedPid(infertop), infertop.stderrText());
            assertEquals(0, infertop.waitFor(120), infertop.stderrText());
            assertEquals(1, count(infertop.stderr, "infertop: pid " + foreign.pid() + " (" + name + ") runs as "
                    + nobody.label() + ", not as you, root (uid 0): tracing it all the same"), infertop.stderrText());
            assertEquals(0, count(infertop.stderr, "skipping pid"), infertop.stderrText());
            assertTrue(tokens(infertop.finalObject()) > 0, infertop.finalObject().toString());
            assertTrue(foreign.isAlive(), "an attached process is never stopped");
        } finally {
            stop(foreign);
        }
        LeakCheck.assertNothingLeft();
    }

    @Test
    void pidOfAnotherUsersProcessIsTracedWithOneLineSayingWhose() throws Exception {
        Process foreign = start(true);
        try {
            awaitMapped(foreign.pid(), "/libllama.");
            try (InfertopProcess infertop = InfertopProcess.start("--json", "-d", "0.5", "-n", "2", "-p",
                    Long.toString(foreign.pid()))) {
                assertEquals(0, infertop.waitFor(120), infertop.stderrText());
                assertEquals(1, count(infertop.stderr, "infertop: pid " + foreign.pid() + " (" + name
                        + ") runs as " + nobody.label() + ", not as you, root (uid 0): tracing it all the same"),
                        infertop.stderrText());
                assertTrue(tokens(infertop.finalObject()) > 0, infertop.finalObject().toString());
            }
        } finally {
            stop(foreign);
        }
        LeakCheck.assertNothingLeft();
    }

    private static void awaitMapped(long pid, String library) throws Exception {
        for (int attempt = 0; attempt < 200; attempt++) {
            try {
                if (Files.readString(Path.of("/proc/" + pid + "/maps")).contains(library)) {
                    return;
                }
            } catch (IOException e) {
                // not yet readable
            }
            Thread.sleep(50);
        }
        throw new AssertionError(library + " never mapped by pid " + pid);
    }

    /**
     * Runs a finite llama-bench through infertop; while it runs, checks it is nobody's (uid, gid, groups, no
     * capability, HOME); after, that every token was counted: the switch happens after the gate, with the
     * probes already in place.
     */
    private static List<String> launchAsNobody(Map<String, String> extraEnvironment, String... userOptions)
            throws Exception {
        int repetitions = 200; // a few seconds on the tiny model: long enough to look at it running
        Map<String, String> environment = new HashMap<>(libraryPath());
        environment.putAll(extraEnvironment);
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5"));
        args.addAll(InfertopProcess.env(libraryPath()));
        args.addAll(List.of(userOptions));
        args.addAll(List.of("--", bench.toString(), "-m", model.toString(), "-p", Integer.toString(PROMPT_TOKENS),
                "-n", Integer.toString(GENERATED_TOKENS), "-r", Integer.toString(repetitions), "-t", "1"));
        try (InfertopProcess infertop = InfertopProcess.start(environment, args.toArray(String[]::new))) {
            long pid = tracedPid(infertop);
            awaitCommand(pid, name);
            String uid = Integer.toString(nobody.uid());
            String gid = Integer.toString(nobody.gid());
            assertEquals(String.join("\t", uid, uid, uid, uid), statusLine(pid, "Uid"));
            assertEquals(String.join("\t", gid, gid, gid, gid), statusLine(pid, "Gid"));
            assertEquals(Set.copyOf(nobody.groups().stream().map(String::valueOf).toList()),
                    new TreeSet<>(List.of(statusLine(pid, "Groups").split("\\s+"))));
            assertEquals("0000000000000000", statusLine(pid, "CapEff"));
            List<String> variables = List.of(new String(Files.readAllBytes(Path.of("/proc/" + pid + "/environ")),
                    StandardCharsets.UTF_8).split("\0"));
            assertTrue(variables.contains("HOME=" + nobody.home()), variables.toString());
            assertTrue(variables.contains("USER=nobody") && variables.contains("LOGNAME=nobody"), variables.toString());

            assertEquals(0, infertop.waitFor(300), infertop.stderrText());
            JsonNode total = infertop.finalObject();
            assertEquals("exited", total.get("target_state").asText());
            // llama-bench -p 64 -n 32 -r R, counted as LlamaBenchRun says: every token from the first one on.
            LlamaBenchRun bench = new LlamaBenchRun(PROMPT_TOKENS, GENERATED_TOKENS, repetitions);
            assertEquals(bench.promptTokensCounted(), total.get("tokens_prefill").asLong(), total.toString());
            assertEquals(bench.generatedTokensCounted(), total.get("tokens_decode").asLong());
            return List.copyOf(infertop.stderr);
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    @Test
    void userRunsTheLaunchedCommandAsThatUserTracedFromItsFirstToken() throws Exception {
        List<String> stderr = launchAsNobody(Map.of(), "--user", "nobody");
        assertEquals(0, count(stderr, "who ran sudo"), String.join("\n", stderr));
    }

    @Test
    void throughSudoTheLaunchedCommandRunsAsTheCallerWithANote() throws Exception {
        List<String> stderr = launchAsNobody(Map.of("SUDO_UID", Integer.toString(nobody.uid()),
                "SUDO_GID", Integer.toString(nobody.gid())));
        assertEquals(1, count(stderr, "infertop: running the command as " + nobody.label()
                + ", who ran sudo; --user root runs it as root"), String.join("\n", stderr));
    }

    @Test
    void userRootKeepsRootThroughSudo() throws Exception {
        Map<String, String> environment = new HashMap<>(libraryPath());
        environment.put("SUDO_UID", Integer.toString(nobody.uid()));
        List<String> args = new ArrayList<>(List.of("--json", "-d", "0.5", "-n", "1", "--user", "root"));
        args.addAll(InfertopProcess.env(libraryPath()));
        args.add("--");
        args.addAll(endlessBench());
        try (InfertopProcess infertop = InfertopProcess.start(environment, args.toArray(String[]::new))) {
            long pid = tracedPid(infertop);
            awaitCommand(pid, name);
            assertEquals("0\t0\t0\t0", statusLine(pid, "Uid"));
            assertEquals(0, infertop.waitFor(120), infertop.stderrText());
            assertEquals(0, count(infertop.stderr, "who ran sudo"), infertop.stderrText());
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    /**
     * The demo's source-built workload is infertop's own build in infertop's cache: through sudo it keeps running
     * as infertop's user (sudo's caller often cannot read root's home), says so, and still traces tokens.
     */
    @Test
    void demoThroughSudoRunsItsWorkloadAsInfertopsUser() throws Exception {
        try (InfertopProcess infertop = InfertopProcess.start(Map.of("SUDO_UID", Integer.toString(nobody.uid())),
                "demo", "--build", "source", "--model", "tiny", "--workload", "bench", "--json", "-d", "0.5")) {
            long pid = tracedPid(infertop);
            awaitCommand(pid, "llama-bench");
            assertEquals("0\t0\t0\t0", statusLine(pid, "Uid"));
            // Until an interval has tokens (on a loaded machine the bench may take seconds to its first), then
            // stopped as a user stops it.
            infertop.awaitJson("tokens", line -> line.path("tokens_prefill").asLong()
                    + line.path("tokens_decode").asLong() > 0, 120);
            LlamaBenchIT.signal(infertop.process.pid(), "TERM");
            assertEquals(128 + 15, infertop.waitFor(60), infertop.stderrText());
            assertEquals(1, count(infertop.stderr, "infertop: demo: the workload runs as infertop's user, not sudo's "
                    + "caller"), infertop.stderrText());
            assertTrue(tokens(infertop.finalObject()) > 0, infertop.finalObject().toString());
        } finally {
            LeakCheck.assertNothingLeft();
        }
    }

    /** demo --build source --user USER, USER unable to read infertop's cache (root's private home): one line. */
    @Test
    void demoAsAUserWhoCannotReadTheCacheIsOneLine() throws Exception {
        Path tool = LlamaCppWorkload.findProvisioned().sourceBuildTool("llama-bench");
        Requirements.require(Setpriv.firstUnusable(setpriv, nobody, List.of(tool), List.of())
                .isPresent(), "infertop's cache is readable by nobody here (not in a private home)");
        String line = assertOneUsageLine(Map.of(), "demo", "--build", "source", "--model", "tiny", "--workload",
                "bench", "--json", "--user", "nobody");
        assertTrue(line.startsWith("infertop: demo --user nobody: nobody cannot reach ") && line.contains(
                "set INFERTOP_CACHE to a directory nobody can read, or run the demo without --user"), line);
    }

    /** Runs infertop to its end: exactly one line "infertop: ...", exit 2, nothing on stdout or in the kernel. */
    private static String assertOneUsageLine(Map<String, String> environment, String... args) throws Exception {
        Set<Path> gatesBefore = gateDirectories();
        try (InfertopProcess infertop = InfertopProcess.start(environment, args)) {
            int status = infertop.waitFor(60);
            String shown = String.join(" ", args) + "\nstderr:\n" + infertop.stderrText();
            assertEquals(2, status, shown);
            assertEquals(1, infertop.stderr.size(), shown);
            assertEquals(List.of(), infertop.stdout, shown);
            String line = infertop.stderr.getFirst();
            assertTrue(line.startsWith("infertop: ") && !line.contains("Exception"), shown);
            LeakCheck.assertNothingLeft();
            Set<Path> gatesNow = gateDirectories();
            gatesNow.removeAll(gatesBefore);
            assertEquals(Set.of(), gatesNow, "gate directories left behind");
            return line;
        }
    }

    private static Set<Path> gateDirectories() throws IOException {
        try (Stream<Path> entries = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return entries.filter(p -> p.getFileName().toString().startsWith("infertop-gate-"))
                    .collect(TreeSet::new, Set::add, Set::addAll);
        }
    }

    private static String[] launching(String... options) {
        List<String> args = new ArrayList<>(List.of(options));
        args.add("--");
        args.addAll(endlessBench());
        return args.toArray(String[]::new);
    }

    @Test
    void anUnknownUserIsOneLineAndExitTwo() throws Exception {
        assertEquals("infertop: --user no-such-user-ifu: no such user (see getent passwd); give a user name or uid",
                assertOneUsageLine(libraryPath(), launching("--json", "--user", "no-such-user-ifu")));
        assertEquals("infertop: SUDO_UID=3999999999 names no user (see getent passwd): give --user USER, or "
                        + "--user root to run the command as root",
                assertOneUsageLine(Map.of("SUDO_UID", "3999999999", "LD_LIBRARY_PATH", shared.toString()),
                        launching("--json")));
        assertTrue(assertOneUsageLine(Map.of(), "--json", "--user", "nobody", "-p", "1").contains("-- COMMAND"));
        assertTrue(assertOneUsageLine(Map.of(), "--json", "--any-user", "-p", "1").contains("--follow"));
    }

    @Test
    void aCommandTheUserCannotReachIsOneLineAndExitTwo() throws Exception {
        Path hidden = Files.createTempDirectory("infertop-foreign-private-"); // 0700, root's
        Path privateBench = hidden.resolve(name);
        try {
            Files.copy(bench, privateBench, StandardCopyOption.COPY_ATTRIBUTES);
            List<String> args = new ArrayList<>(List.of("--json", "--user", "nobody", "--", privateBench.toString(),
                    "-m", model.toString()));
            String line = assertOneUsageLine(libraryPath(), args.toArray(String[]::new));
            assertEquals("infertop: nobody cannot run " + privateBench + " (a directory above it may be private, like "
                    + "/root): put it where nobody can reach it, or give --user root", line);
        } finally {
            Files.deleteIfExists(privateBench);
            Files.deleteIfExists(hidden);
        }
    }
}
