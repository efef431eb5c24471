package dev.infertop.export;

import dev.infertop.ffi.LibC;
import dev.infertop.io.FileAccess;
import dev.infertop.snapshot.SnapshotFixtures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Another user races the root writer with inotify and renameat2(RENAME_EXCHANGE) (src/test/c/snapshot-racer.c,
 * run through setpriv as uid 65534), and plants links, FIFOs and directories of its own, against real snapshot
 * and DAG writes. Root-owned canary files sit behind every link and exchanged directory: after every try
 * (bounded in number and time) their content, mode and existence are what they were, no write hung on a FIFO,
 * and a directory the user owns is refused in one line.
 */
class SnapshotRaceTest {
    private static final int NOBODY = 65534;
    private static final List<String> CANARIES = List.of("latency.hlog", "trace.json", "report.html",
            "summary.json", "operator-dag.dot", "operator-dag.svg", "dag");
    private static final int TRIES = 40;
    private static final long TRY_BOUND_S = 30;
    private static final long ALL_TRIES_BOUND_NS = TimeUnit.SECONDS.toNanos(90);

    private Path base;
    private Path canary;
    private Path racer;
    private final List<Process> racers = new ArrayList<>();
    private final List<String> racerLines = new CopyOnWriteArrayList<>();

    private static void require(boolean condition, String reason) {
        if (condition) {
            return;
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            Assertions.fail("cannot run in CI: " + reason);
        }
        Assumptions.abort(reason);
    }

    private static boolean executable(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, name))) {
                return true;
            }
        }
        return false;
    }

    @BeforeEach
    void setUp() throws Exception {
        require(LibC.geteuid() == 0, "needs root: the writer runs as root against another uid's racer");
        require(executable("gcc"), "needs gcc to build the racer (src/test/c/snapshot-racer.c)");
        require(executable("setpriv"), "needs setpriv (util-linux) to run the racer as uid 65534");
        base = Files.createTempDirectory("infertop-race-");
        Files.setAttribute(base, "unix:mode", 0711); // the other uid may pass through, not list or write
        racer = base.resolve("snapshot-racer");
        Process gcc = new ProcessBuilder("gcc", "-O2", "-Wall", "-o", racer.toString(), "src/test/c/snapshot-racer.c")
                .redirectErrorStream(true).start();
        String output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), output);
        Files.setAttribute(racer, "unix:mode", 0755);
        canary = Files.createDirectory(base.resolve("canary"));
        Files.setAttribute(canary, "unix:mode", 0700);
        for (String name : CANARIES) {
            Path file = Files.writeString(canary.resolve(name), "canary " + name + "\n");
            Files.setAttribute(file, "unix:mode", 0600);
        }
    }

    private void stopRacers() throws InterruptedException {
        for (Process process : racers) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        stopRacers();
        if (base == null) {
            return;
        }
        try (Stream<Path> walk = Files.walk(base)) { // release a writer a FIFO still holds (the old code's hang)
            for (Path path : walk.toList()) {
                if ("p".equals(kind(path))) {
                    try {
                        LibC.closeQuietly(LibC.openNonBlocking(path.toString(), false));
                    } catch (IOException ignored) {
                        // gone meanwhile
                    }
                }
            }
        }
        try (Stream<Path> walk = Files.walk(base)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static String kind(Path path) {
        try {
            int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return (mode & 0xf000) == 0x1000 ? "p" : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** Each canary's content, mode and existence, and the canary directory's entries. */
    private Map<String, String> canaries() throws IOException {
        Map<String, String> state = new TreeMap<>();
        try (Stream<Path> list = Files.list(canary)) {
            state.put("(entries)", list.map(p -> p.getFileName().toString()).sorted().toList().toString());
        }
        for (String name : CANARIES) {
            Path file = canary.resolve(name);
            state.put(name, !Files.exists(file, LinkOption.NOFOLLOW_LINKS) ? "deleted"
                    : String.format("%o ", (Integer) Files.getAttribute(file, "unix:mode", LinkOption.NOFOLLOW_LINKS)
                    & 07777) + Files.readString(file).strip());
        }
        return state;
    }

    private Path ownedByNobody(Path dir, int mode) throws IOException {
        Files.setAttribute(dir, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(dir, "unix:gid", NOBODY, LinkOption.NOFOLLOW_LINKS);
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) { // setting a FIFO's mode would open it
            Files.setAttribute(dir, "unix:mode", mode, LinkOption.NOFOLLOW_LINKS);
        }
        return dir;
    }

    /** Starts the racer as uid 65534 with {@code args} and waits for its "ready" line. */
    private void startRacer(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY,
                "--clear-groups", racer.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        racers.add(process);
        BlockingQueue<String> first = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    racerLines.add(line);
                    first.offer(line);
                }
            } catch (IOException ignored) {
                // the racer was stopped
            }
            first.offer("(exited)");
        });
        assertEquals("ready", first.poll(60, TimeUnit.SECONDS), "the racer " + String.join(" ", args) + " started");
    }

    private long swapsWon() {
        return racerLines.stream().filter(line -> line.startsWith("swapped")).count();
    }

    /** What one try did: its outcome line, or that it did not return within the bound (hung). */
    private record Outcome(String line, boolean hung) {}

    private interface Write {
        String run(int attempt) throws Exception;
    }

    /** Runs {@code write} up to TRIES times on a thread of its own each, stopping at the first that hangs. */
    private static List<Outcome> tries(Write write) throws Exception {
        List<Outcome> outcomes = new ArrayList<>();
        long start = System.nanoTime();
        for (int attempt = 1; attempt <= TRIES && System.nanoTime() - start < ALL_TRIES_BOUND_NS; attempt++) {
            int n = attempt;
            FutureTask<String> task = new FutureTask<>(() -> {
                try {
                    return write.run(n);
                } catch (SnapshotWriteException | IOException e) {
                    return "refused: " + e.getMessage();
                }
            });
            Thread.ofPlatform().daemon().name("race-writer-" + attempt).start(task);
            try {
                outcomes.add(new Outcome(task.get(TRY_BOUND_S, TimeUnit.SECONDS), false));
            } catch (TimeoutException e) {
                outcomes.add(new Outcome("hung", true));
                break;
            }
        }
        return outcomes;
    }

    private void assertNothingHungAndCanariesIntact(List<Outcome> outcomes, Map<String, String> before)
            throws Exception {
        stopRacers();
        String tries = outcomes.size() + " tries, the racer won " + swapsWon() + " exchange rounds";
        System.out.println("SnapshotRaceTest: " + tries);
        boolean hung = outcomes.stream().anyMatch(Outcome::hung);
        assertEquals(before, canaries(), "root wrote, chmod-ed or deleted outside the snapshot: " + tries
                + (hung ? ", the last of them hung" : ""));
        assertTrue(!hung, "a write hung (a FIFO at one of its names) after " + tries);
    }

    @Test
    void aDirectoryAnotherUserOwnsIsRefusedInOneLineAndTheirRacerReachesNothing() throws Exception {
        Path own = ownedByNobody(Files.createDirectory(base.resolve("own")), 0755);
        Map<String, String> before = canaries();
        startRacer("watch", own.toString(), canary.toString(), "600");
        List<Outcome> outcomes = tries(attempt -> SnapshotDirectoryWriter.writeDirectory(own.resolve("snap"),
                SnapshotFixtures.content(), attempt % 2 == 0 ? FileAccess.SHARED : FileAccess.PRIVATE)
                .directory().toString());
        assertNothingHungAndCanariesIntact(outcomes, before);
        String refusal = "refused: cannot write snapshot " + own.resolve("snap") + ": " + own + " is owned by uid 65534,"
                + " not by root: its owner could swap what infertop writes there; choose a directory only root can"
                + " write in with --snapshot-dir";
        assertEquals(List.of(refusal), outcomes.stream().map(Outcome::line).distinct().toList());
        assertEquals(TRIES, outcomes.size());
    }

    @Test
    void inARootOwnedStickyDirectoryTheUsersOwnEntriesLeadNowhere() throws Exception {
        Path sticky = Files.createDirectory(base.resolve("sticky"));
        Files.setAttribute(sticky, "unix:mode", 01777);
        Path sub = ownedByNobody(Files.createDirectory(sticky.resolve("sub")), 0777);
        ownedByNobody(Files.createSymbolicLink(sticky.resolve("sub-link"), canary), 0);
        // Names a snapshot in the sticky directory would take, planted first.
        ownedByNobody(Files.createSymbolicLink(sticky.resolve("snap"), canary), 0);
        LibC.mkfifo(sticky.resolve("snap-2").toString(), 0666);
        ownedByNobody(sticky.resolve("snap-2"), 0);
        ownedByNobody(Files.createSymbolicLink(sticky.resolve("snap-3"), canary.resolve("trace.json")), 0);
        Map<String, String> before = canaries();
        startRacer("watch", sub.toString(), canary.toString(), "600");
        startRacer("flip", sticky.toString(), "sub", "sub-link", "600");
        List<Outcome> outcomes = tries(attempt -> {
            FileAccess access = attempt % 4 < 2 ? FileAccess.SHARED : FileAccess.PRIVATE;
            Path target = attempt % 2 == 0 ? sticky.resolve("snap") : sticky.resolve("sub/snap");
            return SnapshotDirectoryWriter.writeDirectory(target, SnapshotFixtures.content(), access).directory()
                    .toString();
        });
        assertNothingHungAndCanariesIntact(outcomes, before);
        for (int i = 0; i < outcomes.size(); i++) {
            String line = outcomes.get(i).line();
            if (i % 2 == 0) { // attempt i + 1 is odd: through the user's sub, a directory or a link by turns
                assertTrue(line.startsWith("refused: cannot write snapshot " + sticky.resolve("sub/snap") + ": ")
                        && (line.contains(" is owned by uid 65534, not by root") || line.contains("symbolic link")),
                        line);
            } else {
                Path written = Path.of(line);
                assertEquals(sticky, written.getParent(), line);
                assertTrue(written.getFileName().toString().matches("snap-([4-9]|[1-9][0-9]+)"), line);
                assertEquals(0, (int) Files.getAttribute(written, "unix:uid", LinkOption.NOFOLLOW_LINKS));
                assertTrue(Files.isRegularFile(written.resolve("summary.json"), LinkOption.NOFOLLOW_LINKS), line);
            }
        }
        assertTrue(Files.isSymbolicLink(sticky.resolve("snap")) && Files.isSymbolicLink(sticky.resolve("snap-3"))
                && "p".equals(kind(sticky.resolve("snap-2"))), "the planted names are as they were");
        try (Stream<Path> theirs = Files.walk(Files.isSymbolicLink(sub) ? sticky.resolve("sub-link") : sub)) {
            assertEquals(List.of(), theirs.filter(p -> owner(p) == 0).toList(), "nothing of root's in the user's tree");
        }
    }

    private static int owner(Path path) {
        try {
            return (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return -1;
        }
    }

    @Test
    void theDagFileInADirectoryItsUserOwnsIsWrittenThroughTheFdThatMadeIt() throws Exception {
        Path own = ownedByNobody(Files.createDirectory(base.resolve("cwd")), 0755);
        Map<String, String> before = canaries();
        startRacer("watch", own.toString(), canary.toString(), "600");
        OperatorDag dag = OperatorDag.of(OperatorDagTest.graph());
        List<Outcome> outcomes = tries(attempt -> {
            DagDotWriter.write(dag, own.resolve("infertop-dag-1-000000.dot"),
                    attempt % 2 == 0 ? FileAccess.SHARED : FileAccess.PRIVATE);
            return "written";
        });
        assertNothingHungAndCanariesIntact(outcomes, before);
        assertEquals(TRIES, outcomes.size());
        for (Outcome outcome : outcomes) {
            assertTrue(outcome.line().equals("written") || !outcome.line().contains("\n"), outcome.line());
        }
    }
}
