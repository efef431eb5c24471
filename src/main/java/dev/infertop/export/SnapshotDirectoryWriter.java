package dev.infertop.export;

import dev.infertop.io.FileAccess;
import dev.infertop.io.OutputFiles;
import dev.infertop.view.SafeJson;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

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
     * Writes {@code content} to {@code target} (or target-2, -3, … when that exists already) and returns the
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
     */
    public static Written writeDirectory(Path target, SnapshotContent content, FileAccess access)
            throws SnapshotWriteException {
        Path absolute = target.toAbsolutePath().normalize();
        Path parent = absolute.getParent();
        Path temp = null;
        try {
            createParents(parent, access);
            temp = Files.createTempDirectory(parent, "." + absolute.getFileName() + ".tmp-"); // 0700
            List<LeftOut> leftOut = writeFiles(temp, content);
            setModes(temp, access);
            return new Written(moveIntoPlace(temp, absolute), leftOut);
        } catch (IOException | RuntimeException e) {
            deleteTree(temp);
            throw new SnapshotWriteException("cannot write snapshot " + absolute + ": " + describe(e), e);
        } catch (Error e) {
            deleteTree(temp); // infertop ends (see session.FatalErrors): no half directory stays behind
            throw e;
        }
    }

    /**
     * Creates the missing directories down to {@code directory}, each with {@code access}'s directory mode
     * (one made for a %p in the middle of a pattern holds snapshots too); those that exist are left as they are.
     */
    static void createParents(Path directory, FileAccess access) throws IOException {
        if (Files.isDirectory(directory)) {
            return;
        }
        Path above = directory.getParent();
        if (above != null) {
            createParents(above, access);
        }
        try {
            Files.createDirectory(directory, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    FileAccess.PRIVATE.directoryPermissions()));
        } catch (java.nio.file.FileAlreadyExistsException raced) {
            if (!Files.isDirectory(directory, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                throw raced;
            }
            return; // another writer made it meanwhile: its mode is its own
        }
        OutputFiles.setPermissions(directory, access.directoryPermissions());
    }

    /** The finished directory's modes, set exactly (the umask is not asked): its files', then its own. */
    private static void setModes(Path directory, FileAccess access) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.toList()) {
                OutputFiles.setPermissions(file, access.filePermissions());
            }
        }
        OutputFiles.setPermissions(directory, access.directoryPermissions());
    }

    static List<LeftOut> writeFiles(Path directory, SnapshotContent content) throws IOException {
        // Required files first: a snapshot is complete without any optional rendering.
        try (OutputStream out = Files.newOutputStream(directory.resolve(HLOG))) {
            HlogWriter.write(out, content.histograms(),
                    HlogWriter.firstStartMs(content.histograms(), content.createdEpochMs()));
        }
        try (OutputStream out = Files.newOutputStream(directory.resolve(TRACE))) {
            ChromeTraceWriter.write(out, content.window(), content.tensorNames(), content.last().target().pid(),
                    content.last().target().command(), content.threadNames());
        }
        Files.writeString(directory.resolve(REPORT), HtmlReportWriter.html(content), StandardCharsets.UTF_8);
        List<String> files = new ArrayList<>(FILES);
        List<LeftOut> leftOut = new ArrayList<>();
        // The operator DAG of the last decode graph, when the operator layer traced one: the DOT text is
        // required, the SVG picture optional (bounded in time; a failure is a note, never a lost snapshot).
        if (content.dag() != null) {
            DagDotWriter.write(content.dag(), directory.resolve(DAG_DOT), FileAccess.PRIVATE); // see setModes
            files.add(DAG_DOT);
            String problem = renderOptional(directory.resolve(DAG_SVG),
                    () -> DagSvgWriter.svg(content.dag()), OPTIONAL_RENDER_TIMEOUT_MS);
            if (problem == null) {
                files.add(DAG_SVG);
            } else {
                leftOut.add(new LeftOut(DAG_SVG, problem));
            }
        }
        // summary.json last: a directory with a complete summary has every other file.
        byte[] summary = SafeJson.mapper().writerWithDefaultPrettyPrinter()
                .writeValueAsBytes(SummaryWriter.json(content, files, leftOut));
        Files.write(directory.resolve(SUMMARY), summary);
        return leftOut;
    }

    /** An optional file that was not written, and why (summary.json's snapshot.left_out). */
    public record LeftOut(String file, String why) {}

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
            Files.writeString(file, rendered, StandardCharsets.UTF_8);
            return null;
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // the summary does not list it either way
            }
            return "cannot write: " + describe(e);
        }
    }

    private static Path moveIntoPlace(Path temp, Path target) throws IOException {
        for (int attempt = 1; attempt < 1000; attempt++) {
            Path name = attempt == 1 ? target : target.resolveSibling(target.getFileName() + "-" + attempt);
            if (Files.exists(name)) {
                continue;
            }
            try {
                Files.move(temp, name, StandardCopyOption.ATOMIC_MOVE);
                return name;
            } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException raced) {
                if (raced instanceof AtomicMoveNotSupportedException) {
                    throw raced;
                }
            } catch (java.nio.file.DirectoryNotEmptyException raced) {
                // another writer took the name between the check and the move
            }
        }
        throw new FileAlreadyExistsException(target.toString(), null, "999 snapshots of that name exist");
    }

    /** One line: the error's own words (e.g. "No space left on device"), not a stack trace. */
    static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage();
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

    /** Deletes the hidden temporary directories a write of {@code target} made (a write given up midway). */
    public static void deleteTemporaries(Path target) {
        Path absolute = target.toAbsolutePath().normalize();
        String prefix = "." + absolute.getFileName() + ".tmp-";
        try (Stream<Path> siblings = Files.list(absolute.getParent())) {
            for (Path sibling : siblings.filter(p -> p.getFileName().toString().startsWith(prefix)).toList()) {
                deleteTree(sibling);
            }
        } catch (IOException | RuntimeException ignored) {
            // nothing was created, or the directory went away
        }
    }

    static void deleteTree(Path directory) {
        if (directory == null || !Files.exists(directory)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(directory)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException ignored) {
            // best effort: a leftover hidden .tmp- directory is all that can remain
        }
    }
}
