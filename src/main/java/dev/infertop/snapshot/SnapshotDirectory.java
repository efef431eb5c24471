package dev.infertop.snapshot;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.HistogramTag;
import dev.infertop.model.JsonSchema;
import dev.infertop.export.SnapshotDirectoryWriter;
import dev.infertop.export.SummaryWriter;
import dev.infertop.ffi.RegularFile;
import dev.infertop.history.IntervalHistograms;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

import dev.infertop.json.SafeJson;

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
    private final Map<String, List<HlogInterval>> intervalsByTag;

    private SnapshotDirectory(Path directory, JsonNode summary, HlogContents hlog, List<ThreadLane> lanes) {
        this.directory = directory;
        this.summary = summary;
        this.totalsByTag = hlog.totals();
        this.intervalsByTag = hlog.intervals();
        this.lanes = List.copyOf(lanes);
    }

    /**
     * One interval of one tag in latency.hlog: its start (seconds after the log's base time), its length, how many
     * values it counted and their mean, in nanoseconds (HdrHistogram's, to its significant digits).
     */
    public record HlogInterval(double startS, double lengthS, long count, double meanNs) {}

    /** Each tag's intervals as latency.hlog holds them, in the log's order (at most {@link #MAX_INTERVALS_KEPT}). */
    public Map<String, List<HlogInterval>> intervalsByTag() {
        return intervalsByTag;
    }

    private record HlogContents(Map<String, Histogram> totals, Map<String, List<HlogInterval>> intervals) {}

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
        return totalsByTag.get(IntervalHistograms.logTag(HistogramTag.op(op)));
    }

    // What a snapshot file may weigh: far above what infertop writes (a summary is KiBs, a long run's hlog and
    // trace a few MiB, the report a few MiB), far below what would exhaust infertop's heap.
    static final long MAX_SUMMARY_BYTES = 64L << 20;
    static final long MAX_HLOG_BYTES = 512L << 20;
    static final long MAX_TRACE_BYTES = 1L << 30;
    static final long MAX_REPORT_BYTES = 1L << 30;
    /** Distinct histogram tags in latency.hlog (infertop writes one per op type and a few more). */
    static final int MAX_HLOG_TAGS = 4096;
    /** Memory the per-tag run totals may take together. */
    static final long MAX_HLOG_FOOTPRINT_BYTES = 64L << 20;
    /** infertop records with 2 or 3 significant digits; more would let one line allocate tens of MiB. */
    static final int MAX_SIGNIFICANT_DIGITS = 3;
    /** Interval figures kept for {@code infertop diff}: a long run's log (600 intervals per tag) is far below. */
    public static final int MAX_INTERVALS_KEPT = 1 << 20;

    /**
     * Opens one file of the directory: a regular file itself (not a link, FIFO or device: a FIFO named
     * report.html would block the read forever) of at most {@code maxBytes}.
     */
    private static RegularFile openFile(Path file, long maxBytes) throws SnapshotReadException {
        try {
            return RegularFile.open(file, maxBytes, false);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new SnapshotReadException(file + ": missing");
        } catch (java.nio.file.FileSystemException e) {
            throw new SnapshotReadException(file + ": " + (e.getReason() == null ? "cannot read it" : e.getReason()));
        } catch (IOException e) {
            throw new SnapshotReadException(file + ": cannot read it: " + e.getMessage());
        }
    }

    private static InputStream stream(RegularFile file) {
        return java.nio.channels.Channels.newInputStream(file.channel());
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
        MoeSummary.check(summaryFile, summary);
        HlogContents hlog = readHlog(directory.resolve(SnapshotDirectoryWriter.HLOG));
        checkCounts(directory.resolve(SnapshotDirectoryWriter.HLOG), summary, hlog.totals());
        TraceLanes lanes = new TraceLanes();
        readTrace(directory.resolve(SnapshotDirectoryWriter.TRACE), lanes);
        checkReport(directory.resolve(SnapshotDirectoryWriter.REPORT));
        return new SnapshotDirectory(directory, summary, hlog, lanes.lanes());
    }

    private static JsonNode readSummary(Path file) throws SnapshotReadException {
        JsonNode summary;
        try (RegularFile opened = openFile(file, MAX_SUMMARY_BYTES)) {
            summary = SafeJson.sanitised(new ObjectMapper().readTree(stream(opened)));
        } catch (SnapshotReadException e) {
            throw e;
        } catch (JsonProcessingException e) {
            throw new SnapshotReadException(file + ": truncated or not JSON (" + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new SnapshotReadException(file + ": cannot read it: " + e.getMessage());
        }
        if (summary == null || !summary.isObject()) {
            throw new SnapshotReadException(file + ": empty, or not a JSON object");
        }
        JsonNode meta = summary.path(JsonSchema.SNAPSHOT.key());
        if (!SummaryWriter.FORMAT.equals(meta.path(JsonSchema.SnapshotField.FORMAT.key()).asText())) {
            throw new SnapshotReadException(file + ": not an infertop snapshot summary (no snapshot.format \""
                    + SummaryWriter.FORMAT + "\")");
        }
        if (meta.path(JsonSchema.SnapshotField.VERSION.key()).asInt() > SummaryWriter.VERSION) {
            throw new SnapshotReadException(file + ": snapshot format version " + meta.path(JsonSchema.SnapshotField.VERSION.key()).asInt()
                    + " is newer than this infertop reads (" + SummaryWriter.VERSION + "): use a newer infertop");
        }
        return summary;
    }

    private static HlogContents readHlog(Path file) throws SnapshotReadException {
        Map<String, Histogram> totals = new LinkedHashMap<>();
        Map<String, List<HlogInterval>> kept = new LinkedHashMap<>();
        int intervals = 0;
        long footprint = 0;
        try (RegularFile opened = openFile(file, MAX_HLOG_BYTES); InputStream in = stream(opened)) {
            HistogramLogReader reader = new HistogramLogReader(in);
            EncodableHistogram next;
            while ((next = reader.nextIntervalHistogram()) != null) {
                intervals++;
                if (!(next instanceof Histogram histogram)) {
                    throw new SnapshotReadException(file + ": interval " + intervals + " is not an integer histogram");
                }
                if (histogram.getNumberOfSignificantValueDigits() > MAX_SIGNIFICANT_DIGITS) {
                    throw new SnapshotReadException(file + ": interval " + intervals + " has "
                            + histogram.getNumberOfSignificantValueDigits() + " significant digits (infertop writes"
                            + " at most " + MAX_SIGNIFICANT_DIGITS + "): not an infertop log");
                }
                String tag = histogram.getTag() == null ? "" : histogram.getTag();
                if (intervals <= MAX_INTERVALS_KEPT) { // before the total below adds to it (the first is the total)
                    kept.computeIfAbsent(tag, t -> new java.util.ArrayList<>()).add(new HlogInterval(
                            histogram.getStartTimeStamp() / 1000.0 - reader.getStartTimeSec(),
                            (histogram.getEndTimeStamp() - histogram.getStartTimeStamp()) / 1000.0,
                            histogram.getTotalCount(), histogram.getTotalCount() == 0 ? 0 : histogram.getMean()));
                }
                Histogram total = totals.get(tag);
                if (total == null) {
                    if (totals.size() >= MAX_HLOG_TAGS) {
                        throw new SnapshotReadException(file + ": more than " + MAX_HLOG_TAGS + " histogram tags");
                    }
                    footprint += histogram.getEstimatedFootprintInBytes();
                    if (footprint > MAX_HLOG_FOOTPRINT_BYTES) {
                        throw new SnapshotReadException(file + ": its histograms would take more than "
                                + (MAX_HLOG_FOOTPRINT_BYTES >> 20) + " MiB");
                    }
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
        kept.replaceAll((tag, list) -> List.copyOf(list));
        return new HlogContents(totals, java.util.Collections.unmodifiableMap(kept));
    }

    /** A log cut at a line boundary still parses: its counts then fall short of the summary's. */
    private static void checkCounts(Path file, JsonNode summary, Map<String, Histogram> totals)
            throws SnapshotReadException {
        checkCount(file, HistogramTag.TTFT, summary.path(JsonSchema.TTFT_MS.key()).path(JsonSchema.LatencyField.COUNT.key()).asLong(), totals);
        checkCount(file, HistogramTag.TPOT, summary.path(JsonSchema.TPOT_MS.key()).path(JsonSchema.LatencyField.COUNT.key()).asLong(), totals);
        for (Iterator<Map.Entry<String, JsonNode>> it = summary.path(JsonSchema.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> op = it.next();
            checkCount(file, IntervalHistograms.logTag(HistogramTag.op(op.getKey())), op.getValue().path(JsonSchema.OpField.GROUPS.key()).asLong(),
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
        ObjectMapper mapper = new ObjectMapper();
        try (RegularFile opened = openFile(file, MAX_TRACE_BYTES);
             JsonParser parser = mapper.getFactory().createParser(stream(opened))) {
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
        } catch (SnapshotReadException e) {
            throw e;
        } catch (JsonProcessingException e) {
            throw new SnapshotReadException(file + ": truncated or not JSON (" + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new SnapshotReadException(file + ": cannot read it: " + e.getMessage());
        }
    }

    /** A whole report ends with {@code </html>}: only its last bytes are read. */
    private static void checkReport(Path file) throws SnapshotReadException {
        String text;
        try (RegularFile opened = openFile(file, MAX_REPORT_BYTES)) {
            int tail = (int) Math.min(opened.sizeBytes(), 4096);
            java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(tail);
            long position = opened.sizeBytes() - tail;
            while (bytes.hasRemaining()) {
                int read = opened.channel().read(bytes, position + bytes.position());
                if (read < 0) {
                    break;
                }
            }
            text = new String(bytes.array(), 0, bytes.position(), StandardCharsets.UTF_8);
        } catch (SnapshotReadException e) {
            throw e;
        } catch (IOException e) {
            throw new SnapshotReadException(file + ": cannot read it: " + e.getMessage());
        }
        if (!text.stripTrailing().endsWith("</html>")) {
            throw new SnapshotReadException(file + ": truncated (no closing </html>)");
        }
    }
}
