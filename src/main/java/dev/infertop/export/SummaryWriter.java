package dev.infertop.export;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infertop.model.OverheadEstimate;
import dev.infertop.model.Snapshot;
import dev.infertop.view.JsonLinesView;
import dev.infertop.view.JsonSchema;

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
        meta.put("format", FORMAT);
        meta.put("version", VERSION);
        meta.put("trigger", content.trigger());
        meta.put("created", Instant.ofEpochMilli(content.createdEpochMs()).toString());
        meta.put("infertop_version", content.infertopVersion());
        ObjectNode target = meta.putObject("target");
        target.put("pid", s.target().pid());
        target.put("command", s.target().command());
        if (s.target().modelFile() != null) {
            ObjectNode model = target.putObject("model");
            model.put("path", s.target().modelFile());
            putFileIdentity(model, Path.of(s.target().modelFile()));
        }
        ArrayNode libraries = target.putArray("libraries");
        for (String library : s.target().libraries()) {
            ObjectNode node = libraries.addObject();
            node.put("path", library);
            putFileIdentity(node, Path.of(library));
        }
        ArrayNode layers = meta.putArray("layers_on");
        s.layers().stream().filter(l -> l.state().label().equals("on")).forEach(l -> layers.add(l.layer().id()));
        meta.put("probe_overhead_cpu_fraction_est", OverheadEstimate.of(s).roundedFraction());
        meta.put("lost_events", s.lostEvents());
        ObjectNode flight = meta.putObject("flight_recorder");
        flight.put("window_s", content.window().windowNs() / 1e9);
        flight.put("records", content.window().slices().size());
        flight.put("truncated", content.window().truncated());
        ArrayNode fileList = meta.putArray("files");
        files.forEach(fileList::add);
        if (!leftOut.isEmpty()) {
            ArrayNode missing = meta.putArray("left_out");
            for (SnapshotDirectoryWriter.LeftOut file : leftOut) {
                missing.addObject().put("file", file.file()).put("why", file.why());
            }
        }
        return root;
    }

    /** Size and mtime (and nothing when the file is gone): enough to tell two builds or models apart. */
    private static void putFileIdentity(ObjectNode node, Path file) {
        try {
            node.put("bytes", Files.size(file));
            node.put("modified", Files.getLastModifiedTime(file).toInstant().toString());
        } catch (IOException | RuntimeException gone) {
            node.put("bytes", -1);
        }
    }
}
