package dev.infertop.diff;

import dev.infertop.model.JsonSchema;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What each run was: the command, the model file, the llama.cpp libraries (path, size and time: enough to tell two
 * builds apart), the threads traced, the layers on, the op layer's coverage and each op's last tensor shape. A diff
 * lists what differs at its top, so a change in time can be read against a change in what ran.
 */
public final class Identity {
    /** A property a run does not record (a --json log has no library identity). */
    static final String NOT_RECORDED = "not recorded";

    private Identity() {}

    /** One property of both runs. */
    public record Property(String name, String a, String b) {
        public boolean differs() {
            return !Objects.equals(a, b);
        }
    }

    /**
     * @param differs properties that are not the same in both
     * @param same    properties that are
     * @param notes   what the reader should know about how a run was measured (sampling, lost records)
     */
    public record Comparison(List<Property> differs, List<Property> same, List<String> notes) {}

    /** The first runs of both sides compared; {@code notes} are the sides' own ({@link #withinSide}). */
    static Comparison compare(RunRecord a, RunRecord b, List<String> notes) {
        List<Property> all = properties(a, b);
        List<Property> differs = all.stream().filter(Property::differs).toList();
        List<Property> same = all.stream().filter(p -> !p.differs() && !p.name().startsWith("shape ")
                && !p.a().equals(NOT_RECORDED)).toList();
        return new Comparison(differs, same, List.copyOf(notes));
    }

    private static List<Property> properties(RunRecord a, RunRecord b) {
        List<Property> all = new ArrayList<>();
        all.add(new Property(JsonSchema.COMMAND.key(), a.totals().path(JsonSchema.COMMAND.key()).asText(), b.totals().path(JsonSchema.COMMAND.key()).asText()));
        all.add(new Property(JsonSchema.MODEL.key(), model(a), model(b)));
        all.add(new Property("llama.cpp build", build(a), build(b)));
        all.add(new Property(JsonSchema.THREADS.key(), Integer.toString(a.totals().path(JsonSchema.THREADS.key()).size()),
                Integer.toString(b.totals().path(JsonSchema.THREADS.key()).size())));
        all.add(new Property("layers on", layersOn(a), layersOn(b)));
        for (Map.Entry<String, String[]> shape : shapes(a, b).entrySet()) {
            all.add(new Property("shape " + shape.getKey(), shape.getValue()[0], shape.getValue()[1]));
        }
        return all;
    }

    /**
     * What the reader should know of one side's runs: how each was measured (sampling, lost records), and where a
     * run of a side of several differs from the side's first (named A2, A3, ...): runs meant to be alike that are not.
     */
    static List<String> withinSide(String side, List<RunRecord> runs) {
        List<String> notes = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            String name = runs.size() == 1 ? side : side + (i + 1);
            note(notes, name, runs.get(i));
            if (i > 0) {
                for (Property property : properties(runs.getFirst(), runs.get(i))) {
                    if (property.differs() && !property.name().startsWith("shape ")) {
                        notes.add(name + " differs from " + side + "1 in " + property.name() + ": " + property.b());
                    }
                }
            }
        }
        return notes;
    }

    private static void note(List<String> notes, String side, RunRecord run) {
        JsonNode t = run.totals();
        long traced = t.path(JsonSchema.OP_GRAPHS.key()).asLong();
        long all = t.path(JsonSchema.CPU_GRAPH_COMPUTES.key()).asLong();
        if (traced > 0 && traced < all) {
            notes.add(String.format(Locale.ROOT, "%s: the operator layer traced %d of %d graphs: its ops' figures "
                    + "are scaled by %.2f", side, traced, all, (double) all / traced));
        }
        if (traced == 0) {
            notes.add(side + ": no graph traced by the operator layer: no op figures");
        }
        if (t.path(JsonSchema.LOST_EVENTS.key()).asLong() > 0) {
            notes.add(side + ": " + t.path(JsonSchema.LOST_EVENTS.key()).asLong() + " probe records lost");
        }
    }

    /** The model file: its path, and its size where the snapshot recorded it. */
    static String model(RunRecord run) {
        JsonNode model = run.meta().path(JsonSchema.SnapshotField.TARGET.key()).path(JsonSchema.SnapshotTargetField.MODEL.key());
        String path = run.totals().path(JsonSchema.MODEL.key()).asText("not seen");
        if (model.has(JsonSchema.FileIdentityField.BYTES.key()) && model.path(JsonSchema.FileIdentityField.BYTES.key()).asLong() >= 0) {
            return path + " (" + model.path(JsonSchema.FileIdentityField.BYTES.key()).asLong() + " bytes)";
        }
        return path;
    }

    /**
     * The llama.cpp libraries by path with their size and modification time; a --json log does not record them.
     */
    static String build(RunRecord run) {
        JsonNode libraries = run.meta().path(JsonSchema.SnapshotField.TARGET.key()).path(JsonSchema.SnapshotTargetField.LIBRARIES.key());
        if (!libraries.isArray() || libraries.isEmpty()) {
            return NOT_RECORDED;
        }
        List<String> parts = new ArrayList<>();
        for (JsonNode library : libraries) {
            parts.add(library.path(JsonSchema.FileIdentityField.PATH.key()).asText() + " (" + library.path(JsonSchema.FileIdentityField.BYTES.key()).asLong() + " bytes, "
                    + library.path(JsonSchema.FileIdentityField.MODIFIED.key()).asText("?") + ")");
        }
        return String.join(", ", parts);
    }

    static String layersOn(RunRecord run) {
        List<String> on = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = run.totals().path(JsonSchema.LAYERS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> layer = it.next();
            if (layer.getValue().path(JsonSchema.LayerField.STATE.key()).asText().equals("on")) {
                on.add(layer.getKey());
            }
        }
        return on.isEmpty() ? "none" : String.join(",", on);
    }

    /** Each op in both runs with its last shape, where the two differ or not (differences are picked later). */
    private static Map<String, String[]> shapes(RunRecord a, RunRecord b) {
        Map<String, String[]> shapes = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = a.totals().path(JsonSchema.OPS.key()).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> op = it.next();
            JsonNode other = b.totals().path(JsonSchema.OPS.key()).path(op.getKey());
            if (other.has(JsonSchema.OpField.LAST_SHAPE.key())) {
                shapes.put(op.getKey(), new String[] {op.getValue().path(JsonSchema.OpField.LAST_SHAPE.key()).asText(),
                        other.path(JsonSchema.OpField.LAST_SHAPE.key()).asText()});
            }
        }
        return shapes;
    }
}
