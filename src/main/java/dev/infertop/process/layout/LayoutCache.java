package dev.infertop.process.layout;

import dev.infertop.process.BatchLayout;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.infertop.io.RecordJson;
import dev.infertop.io.CacheFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;

/**
 * Calibrations on disk, one JSON file per library build: {@code <dir>/<build-id>.json}. A later attach to the
 * same build reads the layout instead of starting a calibration child again. An entry whose recorded
 * size or SHA-256 differs from the file's is ignored (and overwritten by the next store). A libllama's
 * llama_batch offsets ({@link BatchCalibrator}) are kept the same way in {@code <dir>/<build-id>.batch.json}.
 */
public final class LayoutCache {
    /** Bumped when the JSON shape or the calibration method changes: older entries are then recalibrated. */
    static final int FORMAT_VERSION = 3;

    /** Writing only: reads go through RecordJson (Jackson's first use is dear at start; see there). */
    private static final class Writer {
        static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    /** Far above an entry (a few KB, the op and type names included): a bigger file is not read. */
    private static final int MAX_FILE_BYTES = 1 << 20;

    record Entry(int formatVersion, String key, String buildId, String path, long sizeBytes, long modifiedMillis,
                 String contentSha256, CalibratedLayout layout) {
        LibraryIdentity identity() {
            return new LibraryIdentity(key, buildId, path, sizeBytes, modifiedMillis, contentSha256);
        }
    }

    record BatchEntry(int formatVersion, String key, String buildId, String path, long sizeBytes,
                      long modifiedMillis, String contentSha256, BatchLayout layout) {
        LibraryIdentity identity() {
            return new LibraryIdentity(key, buildId, path, sizeBytes, modifiedMillis, contentSha256);
        }
    }

    private final Path directory;

    public LayoutCache(Path directory) {
        this.directory = directory;
    }

    /** {@code $INFERTOP_CACHE/layouts}, else {@code ~/.cache/infertop/layouts} (as the provisioning scripts). */
    public static LayoutCache defaultLocation() {
        String configured = System.getenv("INFERTOP_CACHE");
        Path root = configured != null && !configured.isBlank() ? Path.of(configured)
                : Path.of(System.getProperty("user.home"), ".cache", "infertop");
        return new LayoutCache(root.resolve("layouts"));
    }

    public Path directory() {
        return directory;
    }

    Path fileFor(LibraryIdentity identity) {
        return directory.resolve(identity.key() + ".json");
    }

    /** The cached layout for this exact file, if one was stored and the file has not changed since. */
    Optional<CalibratedLayout> lookup(LibraryIdentity identity) {
        return read(fileFor(identity), Entry.class, identity, Entry::formatVersion, Entry::identity)
                .flatMap(entry -> checked(() -> LayoutInvariants.check(Path.of(identity.path()), entry.layout()),
                        entry.layout()));
    }

    /** Writes atomically (temp file + rename), so a concurrent reader sees the old entry or the new one. */
    void store(LibraryIdentity identity, CalibratedLayout layout) throws IOException {
        write(fileFor(identity), identity, new Entry(FORMAT_VERSION, identity.key(), identity.buildId(),
                identity.path(), identity.sizeBytes(), identity.modifiedMillis(), identity.contentSha256(), layout));
    }

    Path batchFileFor(LibraryIdentity identity) {
        return directory.resolve(identity.key() + ".batch.json");
    }

    /** The cached llama_batch offsets for this exact libllama, checked like a fresh answer. */
    Optional<BatchLayout> lookupBatch(LibraryIdentity identity) {
        return read(batchFileFor(identity), BatchEntry.class, identity, BatchEntry::formatVersion,
                BatchEntry::identity)
                .flatMap(entry -> checked(() -> BatchAnswer.check(Path.of(identity.path()), entry.layout()),
                        entry.layout()));
    }

    void storeBatch(LibraryIdentity identity, BatchLayout layout) throws IOException {
        write(batchFileFor(identity), identity, new BatchEntry(FORMAT_VERSION, identity.key(), identity.buildId(),
                identity.path(), identity.sizeBytes(), identity.modifiedMillis(), identity.contentSha256(), layout));
    }

    /** An entry of this format for this very file, or none: a corrupt or foreign file is as good as none. */
    private static <E extends Record> Optional<E> read(Path file, Class<E> type, LibraryIdentity identity,
                                        java.util.function.ToIntFunction<E> format,
                                        java.util.function.Function<E, LibraryIdentity> identityOf) {
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            E entry = RecordJson.read(CacheFiles.readAtMost(file, MAX_FILE_BYTES), type);
            return format.applyAsInt(entry) == FORMAT_VERSION && identityOf.apply(entry).sameFileAs(identity)
                    ? Optional.of(entry) : Optional.empty();
        } catch (IOException | RecordJson.Malformed | RuntimeException e) {
            return Optional.empty();
        }
    }

    private interface Check {
        void run() throws CalibrationException;
    }

    /** {@code value} if it passes the checks a fresh answer must pass: a file edited by anyone gets no say. */
    private static <T> Optional<T> checked(Check check, T value) {
        try {
            check.run();
            return Optional.of(value);
        } catch (CalibrationException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Temp file + atomic rename: a concurrent reader sees the old entry or the new one. */
    private void write(Path file, LibraryIdentity identity, Object entry) throws IOException {
        Files.createDirectories(directory);
        Path temporary = Files.createTempFile(directory, identity.key(), ".tmp");
        try {
            Files.writeString(temporary, toJson(entry));
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temporary);
        }
    }

    static String toJson(Object value) {
        try {
            return Writer.JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a layout as JSON", e);
        }
    }
}
