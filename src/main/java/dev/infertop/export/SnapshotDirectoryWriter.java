package dev.infertop.export;

import dev.infertop.io.FileAccess;
import dev.infertop.io.WritableDirectory;
import dev.infertop.json.SafeJson;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes one snapshot directory atomically: every file goes into a hidden temporary directory beside the
 * target, which is renamed to the target name only once all are written (a crash or a full disk leaves no
 * half directory under the target's name; the temporary one is deleted on failure). The files:
 * summary.json, latency.hlog, trace.json, report.html and, when the operator layer traced a decode graph,
 * operator-dag.dot (required) and operator-dag.svg (optional: left out with a note in summary.json when its
 * rendering fails or runs too long). The directory and its files get {@link FileAccess}'s modes exactly, and
 * only once complete (the temporary directory is 0700 while written): private by default, since they hold the
 * model path, prompt lengths and the names of the target's and other processes' threads.
 */
public final class SnapshotDirectoryWriter {
    public static final String SUMMARY = "summary.json";
    public static final String HLOG = "latency.hlog";
    public static final String TRACE = "trace.json";
    public static final String REPORT = "report.html";
    public static final String DAG_DOT = "operator-dag.dot";
    public static final String DAG_SVG = "operator-dag.svg";
    static final List<String> FILES = List.of(SUMMARY, HLOG, TRACE, REPORT);
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private SnapshotDirectoryWriter() {}

    /**
     * The directory a pattern names: %p the target's pid, %t the local time (yyyyMMdd-HHmmss), %n the
     * snapshot's number in this run, %% a percent sign.
     */
    public static Path expand(String pattern, int pid, LocalDateTime time, int number) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (c != '%' || i + 1 == pattern.length()) {
                out.append(c);
                continue;
            }
            char code = pattern.charAt(++i);
            switch (code) {
                case 'p' -> out.append(pid);
                case 't' -> out.append(TIME.format(time));
                case 'n' -> out.append(number);
                case '%' -> out.append('%');
                default -> throw new IllegalArgumentException("unknown %" + code + " in snapshot path pattern '"
                        + pattern + "' (use %p pid, %t time, %n number, %% percent)");
            }
        }
        String path = out.toString();
        while (path.length() > 1 && path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return Path.of(path);
    }

    /**
     * Writes {@code content} to {@code process} (or target-2, -3, … when that exists already) and returns the
     * directory written.
     */
    public static Path write(Path target, SnapshotContent content) throws SnapshotWriteException {
        return writeDirectory(target, content, FileAccess.PRIVATE).directory();
    }

    /** A snapshot directory as written, with the optional files left out of it. */
    public record Written(Path directory, List<LeftOut> leftOut) {}

    /**
     * As {@link #write}, also saying which optional files were left out (and why); the directory, its files and
     * the directories made for it (a pattern's missing parents) get {@code access}'s modes.
     *
     * <p>The parent is opened once, with no symbolic link in its path, and refused unless only root (or
     * infertop's own uid) can rearrange it ({@link WritableDirectory}); from then on every create, write, chmod,
     * unlink and the final rename is relative to the fds of the parent and of the temporary directory made in
     * it, never by a path resolved again.
     */
    public static Written writeDirectory(Path target, SnapshotContent content, FileAccess access)
            throws SnapshotWriteException {
        Path absolute = target.toAbsolutePath().normalize();
        Path shownParent = absolute.getParent();
        // Opened as given (a relative pattern from the working directory itself, not from its name).
        Path parent = target.normalize().getParent();
        String name = absolute.getFileName().toString();
        try (WritableDirectory directory = WritableDirectory.openTrusted(parent == null ? Path.of(".") : parent,
                access)) {
            WritableDirectory temp = directory.createFresh("." + name + ".tmp-"); // 0700
            boolean placed = false;
            try (temp) {
                List<LeftOut> leftOut = writeFiles(temp, content, access);
                temp.chmod(access);
                String placedAs = moveIntoPlace(directory, temp.name(), name);
                placed = true;
                return new Written(shownParent.resolve(placedAs), leftOut);
            } finally {
                if (!placed) { // an Error too: infertop ends (see session.FatalErrors), no half directory stays
                    directory.deleteTree(temp.name());
                }
            }
        } catch (IOException | RuntimeException e) {
            throw new SnapshotWriteException("cannot write snapshot " + absolute + ": " + describe(e), e);
        }
    }

    /** The files of a snapshot, in {@code directory}, each created there and written through its own fd. */
    static List<LeftOut> writeFiles(WritableDirectory directory, SnapshotContent content, FileAccess access)
            throws IOException {
        // Required files first: a snapshot is complete without any optional rendering.
        directory.writeFile(HLOG, access, out -> HlogWriter.write(out, content.histograms(),
                HlogWriter.firstStartMs(content.histograms(), content.createdEpochMs())));
        directory.writeFile(TRACE, access, out -> ChromeTraceWriter.write(out, content.window(),
                content.tensorNames(), content.last().target().pid(), content.last().target().command(),
                content.threadNames()));
        directory.writeFile(REPORT, access, out -> out.write(HtmlReportWriter.html(content)
                .getBytes(StandardCharsets.UTF_8)));
        List<String> files = new ArrayList<>(FILES);
        List<LeftOut> leftOut = new ArrayList<>();
        // The operator DAG of the last decode graph, when the operator layer traced one: the DOT text is
        // required, the SVG picture optional (bounded in time; a failure is a note, never a lost snapshot).
        if (content.dag() != null) {
            String dot = DagDotWriter.toDot(content.dag());
            directory.writeFile(DAG_DOT, access, out -> out.write(dot.getBytes(StandardCharsets.UTF_8)));
            files.add(DAG_DOT);
            String problem = renderOptional(directory, DAG_SVG, access, () -> DagSvgWriter.svg(content.dag()),
                    OPTIONAL_RENDER_TIMEOUT_MS);
            if (problem == null) {
                files.add(DAG_SVG);
            } else {
                leftOut.add(new LeftOut(DAG_SVG, problem));
            }
        } else {
            // the DAG is of a decode step traced whole: none yet (layer off, or no window has traced one)
            leftOut.add(new LeftOut(DAG_DOT, "no decode step traced whole yet (the operator layer off, or no"
                    + " sample window has traced one)", false));
            leftOut.add(new LeftOut(DAG_SVG, "no DAG: see " + DAG_DOT, false));
        }
        // summary.json last: a directory with a complete summary has every other file.
        byte[] summary = SafeJson.mapper().writerWithDefaultPrettyPrinter()
                .writeValueAsBytes(SummaryWriter.json(content, files, leftOut));
        directory.writeFile(SUMMARY, access, out -> out.write(summary));
        return leftOut;
    }

    /**
     * An optional file not in the directory, and why (summary.json's snapshot.left_out); {@code failed}: a writing or rendering that went wrong (said on the
     * screen too), else there was nothing to write (said in summary.json only).
     */
    public record LeftOut(String file, String why, boolean failed) {
        public LeftOut(String file, String why) {
            this(file, why, true);
        }
    }

    /**
     * How long an optional rendering may take. Our own SVG of a folded 80-layer graph takes well under a
     * second; the bound is for a pathological graph on a loaded board, so a snapshot never waits on a picture.
     */
    static final long OPTIONAL_RENDER_TIMEOUT_MS = 10_000;

    /**
     * Renders {@code text} on a daemon thread of its own and writes it to {@code file} when it finishes within
     * {@code timeoutMs}; the reason it was left out otherwise (a render still running is abandoned: it only
     * computes, and writes nothing after the deadline).
     */
    static String renderOptional(Path file, java.util.function.Supplier<String> text, long timeoutMs) {
        Path parent = file.getParent() == null ? Path.of(".") : file.getParent();
        try (WritableDirectory directory = WritableDirectory.openTrustedExisting(parent)) {
            return renderOptional(directory, file.getFileName().toString(), null, text, timeoutMs);
        } catch (IOException | RuntimeException e) {
            return "cannot write: " + describe(e);
        }
    }

    /** As {@link #renderOptional(Path, java.util.function.Supplier, long)}, {@code name} made in {@code directory}. */
    static String renderOptional(WritableDirectory directory, String name, FileAccess access,
                                 java.util.function.Supplier<String> text, long timeoutMs) {
        java.util.concurrent.FutureTask<String> task = new java.util.concurrent.FutureTask<>(text::get);
        Thread.ofPlatform().name("infertop-render").daemon().start(task);
        String rendered;
        try {
            rendered = task.get(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            task.cancel(true);
            return "rendering took over " + (timeoutMs % 1000 == 0 ? timeoutMs / 1000 + " s" : timeoutMs + " ms");
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                throw error; // out of memory, say: infertop ends (session.FatalErrors), not only the picture
            }
            return "rendering failed: " + describe(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
        try {
            directory.writeFile(name, access, out -> out.write(rendered.getBytes(StandardCharsets.UTF_8)));
            return null; // a failed write removed its file: the summary does not list it either way
        } catch (IOException | RuntimeException e) {
            return "cannot write: " + describe(e);
        }
    }

    /**
     * Renames the finished temporary directory to {@code process}, or target-2, -3, … where a name is taken
     * (RENAME_NOREPLACE: whatever has the name, whoever made it, stays as it is); the name it got.
     */
    private static String moveIntoPlace(WritableDirectory directory, String temp, String target) throws IOException {
        for (int attempt = 1; attempt < 1000; attempt++) {
            String name = attempt == 1 ? target : target + "-" + attempt;
            if (directory.renameNoReplace(temp, name)) {
                return name;
            }
        }
        throw new FileAlreadyExistsException(directory.path().resolve(target).toString(), null,
                "999 snapshots of that name exist");
    }

    /** One line: the error's own words (e.g. "No space left on device"), not a stack trace. */
    static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
        if (root instanceof WritableDirectory.Refused) {
            return message + "; choose a directory only root can write in with --snapshot-dir";
        }
        if (root instanceof java.nio.file.AccessDeniedException) {
            return "permission denied (" + message + "): choose a writable directory with --snapshot-dir";
        }
        if (root instanceof java.nio.file.NoSuchFileException missing) {
            return "cannot create " + missing.getFile() + " (no such directory, or not a file system for files)";
        }
        if (root instanceof java.nio.file.FileSystemException fs) {
            return (fs.getReason() != null ? fs.getReason() : root.getClass().getSimpleName())
                    + (fs.getFile() != null ? " (" + fs.getFile() + ")" : "");
        }
        return message == null ? root.getClass().getSimpleName() : message;
    }

    /**
     * Deletes the hidden temporary directories a write of {@code process} made (a write given up midway): those
     * of that prefix in its parent that infertop's uid owns, each walked with fds.
     */
    public static void deleteTemporaries(Path target) {
        Path parent = target.normalize().getParent();
        String prefix = "." + target.toAbsolutePath().normalize().getFileName() + ".tmp-";
        try (WritableDirectory directory = WritableDirectory.openTrustedExisting(
                parent == null ? Path.of(".") : parent)) {
            for (String name : directory.list()) {
                if (name.startsWith(prefix) && directory.ownedByUs(name)) {
                    directory.deleteTree(name);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // nothing was created, or the directory went away (or is one no snapshot is written in)
        }
    }
}
