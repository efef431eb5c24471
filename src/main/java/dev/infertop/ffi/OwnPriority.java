package dev.infertop.ffi;

import java.io.File;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The nice value of infertop's own threads, one owner for it. Attaching to a running engine ({@code -p PID},
 * {@code --follow}), infertop starts at a higher priority ({@link #START_BOOST} below the nice it was started
 * with, as atop runs at nice -20 to keep sampling under heavy load): the engine typically spins every core, and
 * at equal weight the CPU a start needs took longer in wall time beside it than on an idle machine
 * (measurements.md, "Time to the first screen"). Once the first interval is on the screen and the target has mapped its model, every thread yields
 * to the workload at nice {@link #OWN_NICE} for the rest of the run (the ring buffer absorbs the delay; where
 * the kernel groups the CPU by session, below, that weighs only against infertop's own session, whose
 * autogroup also holds the user's shell and is not lowered). The CPU a start takes from the target is the same
 * either way; it is only taken sooner.
 * <p>
 * Linux keeps a nice value per thread and a new thread or child process inherits its creator's: every change
 * here is applied to each thread in /proc/self/task (twice, for one created meanwhile), and a child process is
 * started through {@link #start(ProcessBuilder)}, which ends the boost first, so that no child (the launched
 * target, the sandbox running the target's library) inherits it. Where the kernel groups the CPU by session
 * (autogroup, sched(7): a thread's nice then weighs only against its own session's, and an engine started from
 * another terminal or by a service manager is in another), the boost also takes the session's autogroup from
 * the default nice 0 to -10, and puts it back when the boost ends or infertop exits (unless it was changed
 * since). A session not at 0, such as one another starting infertop raised, is left alone. This is done here,
 * not by the launcher before the JVM starts (which would be a little sooner beside a busy engine): a JVM that failed
 * before its main, or a Ctrl-C then, would leave the user's session raised. Nothing happens where the kernel
 * refuses (lowering a nice value needs CAP_SYS_NICE): infertop then runs at the priority it was given, and a
 * user who started it at a positive nice ({@code nice -n 5 infertop ...}) gets no boost at all.
 */
public final class OwnPriority {
    private OwnPriority() {}

    /** How far below its given nice value an attaching infertop starts. */
    static final int START_BOOST = 10;
    /** The nice value of infertop's threads once the start is over (never below the one it was given). */
    public static final int OWN_NICE = 10;

    private enum Level { GIVEN, START, YIELDED, QUIT }

    private static Level level = Level.GIVEN;
    private static int given = Integer.MIN_VALUE; // read at the first change
    private static boolean firstScreenShown;
    private static boolean targetStarted;

    /** Main's first step: raise the priority until the command turns out not to attach ({@link #backToGiven}). */
    public static synchronized void raiseForStart() {
        int nice = givenNice();
        if (level != Level.GIVEN || nice > 0) {
            return; // asked to run in the background: stay there
        }
        if (setAll(Math.max(-20, nice - START_BOOST))) {
            level = Level.START;
            raiseAutogroup();
        } else {
            setAll(nice); // refused (no CAP_SYS_NICE): any thread it did change goes back
        }
    }

    /**
     * The user quit (q, a signal): the probes must come off at once, and the user waits for it. Yielded at nice
     * {@link #OWN_NICE} beside an engine that fills every core, infertop gets about a tenth of a core (weight 110
     * against 1024 a thread), and starting the detach threads, joining the budget's and the kernel's serialised
     * unregister took over a second after q on a loaded CI machine (measurements.md, "Quit"). From here every thread runs boosted as
     * at the start; only the threads' nice values, not the session's autogroup: a signal's shutdown hooks run in
     * any order, and one that put the autogroup back before this raised it would leave the user's shell raised.
     * A thread's nice value ends with the process.
     */
    public static synchronized void raiseForQuit() {
        int nice = givenNice();
        if (level == Level.QUIT || nice > 0) {
            return; // asked to run in the background: stay there
        }
        if (setAll(Math.max(-20, nice - START_BOOST))) {
            level = Level.QUIT;
        } else {
            setAll(level == Level.YIELDED ? Math.max(nice, OWN_NICE) : nice); // refused: no half-changed set
        }
    }

    /** Back to the nice value infertop was started with: the command is no attach, or a child is started. */
    public static synchronized void backToGiven() {
        if (level == Level.QUIT) {
            setAll(given); // a child started while quitting (none is today) must not inherit the boost
            level = Level.GIVEN;
        }
        if (level == Level.START) {
            setAll(given);
            restoreAutogroup();
            level = Level.GIVEN;
        }
    }

    /** The first interval is on the screen: the start is over once the target has mapped its model too. */
    public static synchronized void firstScreenShown() {
        firstScreenShown = true;
        yieldWhenStarted();
    }

    /**
     * The target has mapped its model (a launched one has loaded it; an attached one had it): from the first
     * screen on, infertop yields the CPU to it.
     */
    public static synchronized void targetStarted() {
        targetStarted = true;
        yieldWhenStarted();
    }

    private static void yieldWhenStarted() {
        // Without a start boost (a launched target was held while infertop started) there is no screen to wait for.
        if (targetStarted && (firstScreenShown || level != Level.START) && level != Level.YIELDED
                && level != Level.QUIT) {
            setAll(Math.max(givenNice(), OWN_NICE));
            restoreAutogroup(); // the session's other programs (the user's shell) keep theirs
            level = Level.YIELDED;
        }
    }

    /** Starts {@code builder}'s process at the nice value infertop was given, never at the start boost. */
    public static Process start(ProcessBuilder builder) throws IOException {
        backToGiven();
        return builder.start();
    }

    private static int givenNice() {
        if (given == Integer.MIN_VALUE) {
            given = niceOf(Path.of("/proc/thread-self/stat"));
        }
        return given;
    }

    private static final Path AUTOGROUP = Path.of("/proc/self/autogroup");
    /** The session's autogroup nice value before the boost, or MIN_VALUE while it is unchanged. */
    private static int autogroupGiven = Integer.MIN_VALUE;

    private static void raiseAutogroup() {
        int nice;
        try {
            nice = autogroupNice(Files.readString(AUTOGROUP));
        } catch (IOException | RuntimeException e) {
            // No autogroup: a kernel without it, or a process still in init's session (an empty file). Thread
            // nice values are what counts then.
            return;
        }
        // Only a session at the default: one below it was raised already (by another infertop starting, whose
        // boost ends with its start; raising it again from there would leave it raised), one above it was put
        // in the background on purpose.
        if (nice != 0 || !writeAutogroup(-START_BOOST)) {
            return;
        }
        autogroupGiven = nice;
        // A signal or an error during the start: the user's session must not keep infertop's boost.
        Runtime.getRuntime().addShutdownHook(new Thread(OwnPriority::restoreAutogroup, "infertop-priority"));
    }

    private static synchronized void restoreAutogroup() {
        if (autogroupGiven == Integer.MIN_VALUE) {
            return;
        }
        try {
            if (autogroupNice(Files.readString(AUTOGROUP)) == -START_BOOST) { // else someone set it since: theirs
                writeAutogroup(autogroupGiven);
            }
        } catch (IOException | RuntimeException e) {
            // nothing to put back
        }
        autogroupGiven = Integer.MIN_VALUE;
    }

    private static boolean writeAutogroup(int nice) {
        try {
            Files.writeString(AUTOGROUP, Integer.toString(nice));
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The nice value in /proc/PID/autogroup's "/autogroup-42 nice 0". */
    static int autogroupNice(String text) {
        String[] words = text.trim().split(" ");
        if (words.length != 3 || !words[1].equals("nice")) {
            throw new IllegalArgumentException("not an autogroup line: " + text.trim());
        }
        return Integer.parseInt(words[2]);
    }

    /** Field 19 of stat(5), counted after the command name (which may hold spaces and parentheses). */
    static int niceOf(Path stat) {
        try {
            String text = Files.readString(stat);
            String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
            return Integer.parseInt(fields[16]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Sets every thread's nice value; false where the kernel refused it for this one. */
    private static boolean setAll(int nice) {
        boolean ok = true;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Errno.allocate(arena);
            for (int pass = 0; pass < 2; pass++) {
                File[] tasks = new File("/proc/self/task").listFiles();
                if (tasks == null) {
                    return false;
                }
                for (File task : tasks) {
                    int tid;
                    try {
                        tid = Integer.parseInt(task.getName());
                    } catch (NumberFormatException e) {
                        continue;
                    }
                    int result = (int) LibC.setpriority$handle().invokeExact(state, LibC.PRIO_PROCESS, tid, nice);
                    if (result != 0 && Errno.read(state) != Errno.ESRCH) { // ESRCH: the thread has ended
                        ok = false;
                    }
                }
                if (!ok) {
                    return false;
                }
            }
        } catch (Throwable t) {
            return false; // infertop works at any priority
        }
        return ok;
    }
}
