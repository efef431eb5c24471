package dev.infertop.snapshot;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.agg.IntervalHistograms;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.export.SummaryWriter;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

import dev.infertop.view.SafeJson;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import dev.infertop.model.ThreadLane;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A snapshot directory read back and checked, for {@code infertop report} and {@code infertop replay}: its
 * summary.json, the run's totals per tag summed from latency.hlog, and a full parse of trace.json. Anything
 * missing, foreign, truncated or inconsistent is refused with a message naming the file.
 */
public final class SnapshotDirectory {
    private final Path directory;
    private final JsonNode summary;
    private final Map<String, Histogram> totalsByTag;
    private final List<ThreadLane> lanes;

    private SnapshotDirectory(Path directory, JsonNode summary, Map<String, Histogram> totalsByTag,
                              List<ThreadLane> lanes) {
        this.directory = directory;
        this.summary = summary;
        this.totalsByTag = totalsByTag;
        this.lanes = List.copyOf(lanes);
    }

    /** Each thread's activity strip over the end of the timeline, rebuilt from trace.json. */
    public List<ThreadLane> lanes() {
        return lanes;
    }

    public Path directory() {
        return directory;
    }

    public JsonNode summary() {
        return summary;
    }

    /** Each tag's histogram over the whole run (its intervals in latency.hlog added up), in nanoseconds. */
    public Map<String, Histogram> totalsByTag() {
        return totalsByTag;
    }

    public Histogram opTotal(String op) {
        return totalsByTag.get(IntervalHistograms.logTag("op:" + op));
    }

    public static SnapshotDirectory open(Path directory) throws SnapshotReadException {
        if (!Files.isDirectory(directory)) {
            throw new SnapshotReadException(directory + ": no such directory");
        }
        Path summaryFile = directory.resolve(SnapshotDirectoryWriter.SUMMARY);
        if (!Files.isRegularFile(summaryFile)) {
            throw new SnapshotReadException(directory + " is not an infertop snapshot: it has no "
                    + SnapshotDirectoryWriter.SUMMARY);
        }
        JsonNode summary = readSummary(summaryFile);
        Map<String, Histogram> totals = readHlog(directory.resolve(SnapshotDirectoryWriter.HLOG));
        checkCounts(directory.resolve(SnapshotDirectoryWriter.HLOG), summary, totals);
        TraceLanes lanes = new TraceLanes();
        readTrace(directory.resolve(SnapshotDirectoryWriter.TRACE), lanes);
        checkReport(directory.resolve(SnapshotDirectoryWriter.REPORT));
        return new SnapshotDirectory(directory, summary, totals, lanes.lanes());
    }

    private static JsonNode readSummary(Path file) throws SnapshotReadException {
        JsonNode summary;
        try {
            summary = SafeJson.sanitised(new ObjectMapper().readTree(file.toFile()));
        } catch (JsonProcessingException e) {
            throw new SnapshotReadException(file + ": truncated or not JSON (" + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new SnapshotReadException(file + ": cannot read it: " + e.getMessage());
        }
        if (summary == null || !summary.isObject()) {
            throw new SnapshotReadException(file + ": empty, or not a JSON object");
        }
        JsonNode meta = summary.path("snapshot");
        if (!SummaryWriter.FORMAT.equals(meta.path("format").asText())) {
            throw new SnapshotReadException(file + ": not an infertop snapshot summary (no snapshot.format \""
                    + SummaryWriter.FORMAT + "\")");
        }
        if (meta.path("version").asInt() > SummaryWriter.VERSION) {
            throw new SnapshotReadException(file + ": snapshot format version " + meta.path("version").asInt()
                    + " is newer than this infertop reads (" + SummaryWriter.VERSION + "): use a newer infertop");
        }
        return summary;
    }

    private static Map<String, Histogram> readHlog(Path file) throws SnapshotReadException {
        if (!Files.isRegularFile(file)) {
            throw new SnapshotReadException(file + ": missing");
        }
        Map<String, Histogram> totals = new LinkedHashMap<>();
        int intervals = 0;
        try (InputStream in = Files.newInputStream(file)) {
            HistogramLogReader reader = new HistogramLogReader(in);
            EncodableHistogram next;
            while ((next = reader.nextIntervalHistogram()) != null) {
                intervals++;
                if (!(next instanceof Histogram histogram)) {
                    throw new SnapshotReadException(file + ": interval " + intervals + " is not an integer histogram");
                }
                String tag = histogram.getTag() == null ? "" : histogram.getTag();
                Histogram total = totals.get(tag);
                if (total == null) {
                    totals.put(tag, histogram);
                } else {
                    total.add(histogram);
                }
            }
        } catch (SnapshotReadException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new SnapshotReadException(file + ": truncated or corrupt after " + intervals + " intervals ("
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")");
        }
        return totals;
    }

    /** A log cut at a line boundary still parses: its counts then fall short of the summary's. */
    private static void checkCounts(Path file, JsonNode summary, Map<String, Histogram> totals)
            throws SnapshotReadException {
        checkCount(file, "ttft", summary.path("ttft_ms").path("count").asLong(), totals);
        checkCount(file, "tpot", summary.path("tpot_ms").path("count").asLong(), totals);
        for (Iterator<Map.Entry<String, JsonNode>> it = summary.path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> op = it.next();
            checkCount(file, IntervalHistograms.logTag("op:" + op.getKey()), op.getValue().path("groups").asLong(),
                    totals);
        }
    }

    private static void checkCount(Path file, String tag, long expected, Map<String, Histogram> totals)
            throws SnapshotReadException {
        Histogram histogram = totals.get(tag);
        long actual = histogram == null ? 0 : histogram.getTotalCount();
        if (actual != expected) {
            throw new SnapshotReadException(file + ": holds " + actual + " " + tag + " samples where summary.json "
                    + "counts " + expected + " (truncated, or from another snapshot)");
        }
    }

    /** Parses all of trace.json (a truncated one fails), one event at a time into {@code lanes}. */
    private static void readTrace(Path file, TraceLanes lanes) throws SnapshotReadException {
        if (!Files.isRegularFile(file)) {
            throw new SnapshotReadException(file + ": missing");
        }
        ObjectMapper mapper = new ObjectMapper();
        try (JsonParser parser = mapper.getFactory().createParser(file.toFile())) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new SnapshotReadException(file + ": not a Chrome trace (no JSON object)");
            }
            boolean events = false;
            JsonToken token;
            while ((token = parser.nextToken()) != null) {
                if (token == JsonToken.FIELD_NAME && parser.getParsingContext().getParent().inRoot()
                        && "traceEvents".equals(parser.currentName())) {
                    if (parser.nextToken() != JsonToken.START_ARRAY) {
                        throw new SnapshotReadException(file + ": not a Chrome trace (traceEvents not an array)");
                    }
                    events = true;
                    while (parser.nextToken() == JsonToken.START_OBJECT) {
                        lanes.add(mapper.readTree(parser));
                    }
                }
            }
            if (!events) {
                throw new SnapshotReadException(file + ": not a Chrome trace (no traceEvents)");
            }
        } catch (JsonProcessingException e) {
            throw new SnapshotReadException(file + ": truncated or not JSON (" + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new SnapshotReadException(file + ": cannot read it: " + e.getMessage());
        }
    }

    private static void checkReport(Path file) throws SnapshotReadException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new SnapshotReadException(file + ": missing");
        } catch (IOException e) {
            throw new SnapshotReadException(file + ": cannot read it: " + e.getMessage());
        }
        if (!text.stripTrailing().endsWith("</html>")) {
            throw new SnapshotReadException(file + ": truncated (no closing </html>)");
        }
    }
}
