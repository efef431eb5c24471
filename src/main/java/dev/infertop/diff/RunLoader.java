package dev.infertop.diff;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.HistogramTag;
import dev.infertop.model.JsonSchema;
import dev.infertop.ffi.RegularFile;
import dev.infertop.history.IntervalHistograms;
import dev.infertop.snapshot.SnapshotDirectory;
import dev.infertop.snapshot.SnapshotReadException;
import dev.infertop.json.SafeJson;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one side of a diff: a snapshot directory (checked whole, as {@code infertop report} checks it) or a file of
 * {@code --json} lines (its interval objects and the final one). Anything else, or anything damaged, is one line
 * naming the path ({@link DiffInputException}).
 */
public final class RunLoader {
    /** A --json log's size: a day of one-second intervals with a hundred op types is far below. */
    static final long MAX_LOG_BYTES = 1L << 30;
    /** A --json line: infertop's are KiBs (a wide MoE model's tens of KiBs). */
    static final int MAX_LINE_CHARS = 16 << 20;
    /** Intervals kept per tag, as for a snapshot. */
    static final int MAX_INTERVALS = SnapshotDirectory.MAX_INTERVALS_KEPT;

    private RunLoader() {}

    public static RunRecord load(Path path) throws DiffInputException {
        if (Files.isDirectory(path)) {
            return snapshot(path);
        }
        if (!Files.exists(path, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new DiffInputException(path + ": no such snapshot directory or --json log");
        }
        return jsonLog(path);
    }

    static RunRecord snapshot(Path directory) throws DiffInputException {
        SnapshotDirectory snapshot;
        try {
            snapshot = SnapshotDirectory.open(directory);
        } catch (SnapshotReadException e) {
            throw new DiffInputException(e.getMessage());
        }
        Map<String, List<RunRecord.Interval>> intervals = new LinkedHashMap<>();
        snapshot.intervalsByTag().forEach((tag, list) -> intervals.put(tag, fromHlog(list)));
        return new RunRecord(directory, "snapshot", snapshot.summary(), snapshot.summary().path(JsonSchema.SNAPSHOT.key()),
                intervals, snapshot.totalsByTag());
    }

    /**
     * The hlog's intervals with something counted. The first interval of a tag may be the folded base of a long run
     * (IntervalHistograms keeps 600 a tag and folds older ones into one): an interval over three times the tag's
     * median length is such a base, a mean over many intervals, and is left out rather than ranked as one.
     */
    static List<RunRecord.Interval> fromHlog(List<SnapshotDirectory.HlogInterval> list) {
        double[] lengths = list.stream().mapToDouble(SnapshotDirectory.HlogInterval::lengthS).sorted().toArray();
        double median = lengths.length == 0 ? 0 : lengths[lengths.length / 2];
        List<RunRecord.Interval> kept = new ArrayList<>();
        for (SnapshotDirectory.HlogInterval interval : list) {
            if (interval.count() > 0 && !(median > 0 && interval.lengthS() > 3 * median)) {
                kept.add(new RunRecord.Interval(interval.startS(), interval.count(), interval.meanNs() / 1e6));
            }
        }
        return List.copyOf(kept);
    }

    static RunRecord jsonLog(Path file) throws DiffInputException {
        ObjectMapper mapper = SafeJson.mapper();
        Map<String, List<RunRecord.Interval>> intervals = new LinkedHashMap<>();
        JsonNode last = null;
        int lineNumber = 0;
        double runS = 0;
        try (RegularFile opened = RegularFile.open(file, MAX_LOG_BYTES, true);
             BufferedReader reader = new BufferedReader(new InputStreamReader(Channels.newInputStream(opened.channel()),
                     StandardCharsets.UTF_8))) {
            String line;
            while ((line = readLine(reader, file, lineNumber + 1)) != null) {
                lineNumber++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode node;
                try {
                    node = SafeJson.sanitised(mapper.readTree(line));
                } catch (JsonProcessingException e) {
                    throw new DiffInputException(file + ": line " + lineNumber + " is not JSON ("
                            + e.getOriginalMessage() + "): not an infertop --json log");
                }
                if (node == null || !node.isObject() || !node.has(JsonSchema.SCOPE.key()) || !node.has(JsonSchema.TOKENS_DECODE.key())) {
                    throw new DiffInputException(file + ": line " + lineNumber
                            + " is not an infertop --json object (no scope, no tokens_decode)");
                }
                if (node.path(JsonSchema.FINAL.key()).asBoolean()) {
                    last = node;
                    continue;
                }
                if (node.path(JsonSchema.SCOPE.key()).asText().equals("interval")) {
                    addInterval(intervals, node, runS);
                    runS += node.path(JsonSchema.SPAN_S.key()).asDouble();
                }
            }
        } catch (DiffInputException e) {
            throw e;
        } catch (java.nio.file.NoSuchFileException e) {
            throw new DiffInputException(file + ": missing");
        } catch (java.nio.file.FileSystemException e) {
            throw new DiffInputException(file + ": " + (e.getReason() == null ? "cannot read it" : e.getReason()));
        } catch (IOException e) {
            throw new DiffInputException(file + ": cannot read it: " + e.getMessage());
        }
        if (last == null) {
            throw new DiffInputException(file + ": no final object (\"final\": true) in " + lineNumber + " lines: "
                    + "a --json log cut short, or not one");
        }
        return new RunRecord(file, "json log", last, MissingNode.getInstance(), intervals, Map.of());
    }

    private static String readLine(BufferedReader reader, Path file, int lineNumber) throws IOException,
            DiffInputException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = reader.read()) != -1 && c != '\n') {
            if (line.length() >= MAX_LINE_CHARS) {
                throw new DiffInputException(file + ": line " + lineNumber + " is over " + MAX_LINE_CHARS
                        + " characters: not an infertop --json log");
            }
            line.append((char) c);
        }
        return c == -1 && line.isEmpty() ? null : line.toString();
    }

    /** An interval object's timed things as a snapshot's hlog keys them: tpot, ttft, op:NAME. */
    private static void addInterval(Map<String, List<RunRecord.Interval>> intervals, JsonNode node, double startS) {
        add(intervals, HistogramTag.TPOT, startS, node.path(JsonSchema.TPOT_MS.key()).path(JsonSchema.LatencyField.COUNT.key()).asLong(), node.path(JsonSchema.TPOT_MS.key()).path(JsonSchema.LatencyField.MEAN.key())
                .asDouble());
        add(intervals, HistogramTag.TTFT, startS, node.path(JsonSchema.TTFT_MS.key()).path(JsonSchema.LatencyField.COUNT.key()).asLong(), node.path(JsonSchema.TTFT_MS.key()).path(JsonSchema.LatencyField.MEAN.key())
                .asDouble());
        for (Iterator<Map.Entry<String, JsonNode>> it = node.path(JsonSchema.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> op = it.next();
            long groups = op.getValue().path(JsonSchema.OpField.GROUPS.key()).asLong();
            add(intervals, opTag(op.getKey()), startS, groups,
                    groups == 0 ? 0 : op.getValue().path(JsonSchema.OpField.WALL_MS.key()).asDouble() / groups);
        }
    }

    private static void add(Map<String, List<RunRecord.Interval>> intervals, String tag, double startS, long count,
                            double meanMs) {
        if (count <= 0) {
            return;
        }
        List<RunRecord.Interval> list = intervals.computeIfAbsent(tag, t -> new ArrayList<>());
        if (list.size() < MAX_INTERVALS) {
            list.add(new RunRecord.Interval(startS, count, meanMs));
        }
    }

    /** The hlog's tag of an op type (an op name with characters a tag cannot hold has them replaced). */
    public static String opTag(String op) {
        return IntervalHistograms.logTag(HistogramTag.op(op));
    }
}
