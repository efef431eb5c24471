package dev.infertop.export;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.OverheadEstimate;
import dev.infertop.model.Snapshot;
import dev.infertop.json.JsonLinesView;
import dev.infertop.model.JsonSchema;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * summary.json: the JSON output's object of the run's totals (the same fields as the final line of --json, see
 * infertop(1)), plus a "snapshot" object: what this directory is, when and why it was taken, the target's build
 * and model identity, the estimated probe overhead and what the flight recorder covers.
 */
public final class SummaryWriter {
    /** The value of snapshot.format: how readers tell an infertop snapshot from a foreign directory. */
    public static final String FORMAT = "infertop-snapshot";
    public static final int VERSION = 1;

    private SummaryWriter() {}

    public static ObjectNode json(SnapshotContent content, List<String> files,
                                  List<SnapshotDirectoryWriter.LeftOut> leftOut) {
        Snapshot s = content.last();
        ObjectNode root = JsonLinesView.toJsonNode(s, true);
        ObjectNode meta = root.putObject(JsonSchema.SNAPSHOT.key());
        meta.put(JsonSchema.SnapshotField.FORMAT.key(), FORMAT);
        meta.put(JsonSchema.SnapshotField.VERSION.key(), VERSION);
        meta.put(JsonSchema.SnapshotField.TRIGGER.key(), content.trigger());
        meta.put(JsonSchema.SnapshotField.CREATED.key(), Instant.ofEpochMilli(content.createdEpochMs()).toString());
        meta.put(JsonSchema.SnapshotField.INFERTOP_VERSION.key(), content.infertopVersion());
        ObjectNode target = meta.putObject(JsonSchema.SnapshotField.TARGET.key());
        target.put(JsonSchema.SnapshotTargetField.PID.key(), s.target().pid());
        target.put(JsonSchema.SnapshotTargetField.COMMAND.key(), s.target().command());
        if (s.target().modelFile() != null) {
            ObjectNode model = target.putObject(JsonSchema.SnapshotTargetField.MODEL.key());
            model.put(JsonSchema.FileIdentityField.PATH.key(), s.target().modelFile());
            putFileIdentity(model, Path.of(s.target().modelFile()));
        }
        ArrayNode libraries = target.putArray(JsonSchema.SnapshotTargetField.LIBRARIES.key());
        for (String library : s.target().libraries()) {
            ObjectNode node = libraries.addObject();
            node.put(JsonSchema.FileIdentityField.PATH.key(), library);
            putFileIdentity(node, Path.of(library));
        }
        ArrayNode layers = meta.putArray(JsonSchema.SnapshotField.LAYERS_ON.key());
        s.layers().stream().filter(l -> l.state().label().equals("on")).forEach(l -> layers.add(l.layer().id()));
        meta.put(JsonSchema.SnapshotField.PROBE_OVERHEAD_CPU_FRACTION_EST.key(), OverheadEstimate.of(s).roundedFraction());
        meta.put(JsonSchema.SnapshotField.LOST_EVENTS.key(), s.lostEvents());
        ObjectNode flight = meta.putObject(JsonSchema.SnapshotField.FLIGHT_RECORDER.key());
        flight.put(JsonSchema.FlightRecorderField.WINDOW_S.key(), content.window().windowNs() / 1e9);
        flight.put(JsonSchema.FlightRecorderField.RECORDS.key(), content.window().slices().size());
        flight.put(JsonSchema.FlightRecorderField.TRUNCATED.key(), content.window().truncated());
        ArrayNode fileList = meta.putArray(JsonSchema.SnapshotField.FILES.key());
        files.forEach(fileList::add);
        if (!leftOut.isEmpty()) {
            ArrayNode missing = meta.putArray(JsonSchema.SnapshotField.LEFT_OUT.key());
            for (SnapshotDirectoryWriter.LeftOut file : leftOut) {
                missing.addObject().put(JsonSchema.LeftOutField.FILE.key(), file.file()).put(JsonSchema.LeftOutField.WHY.key(), file.why());
            }
        }
        return root;
    }

    /** Size and mtime (and nothing when the file is gone): enough to tell two builds or models apart. */
    private static void putFileIdentity(ObjectNode node, Path file) {
        try {
            node.put(JsonSchema.FileIdentityField.BYTES.key(), Files.size(file));
            node.put(JsonSchema.FileIdentityField.MODIFIED.key(), Files.getLastModifiedTime(file).toInstant().toString());
        } catch (IOException | RuntimeException gone) {
            node.put(JsonSchema.FileIdentityField.BYTES.key(), -1);
        }
    }
}
