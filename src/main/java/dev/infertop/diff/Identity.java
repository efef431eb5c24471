package dev.infertop.diff;

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

    static Comparison compare(RunRecord a, RunRecord b) {
        List<Property> all = new ArrayList<>();
        all.add(new Property("command", a.totals().path("command").asText(), b.totals().path("command").asText()));
        all.add(new Property("model", model(a), model(b)));
        all.add(new Property("llama.cpp build", build(a), build(b)));
        all.add(new Property("threads", Integer.toString(a.totals().path("threads").size()),
                Integer.toString(b.totals().path("threads").size())));
        all.add(new Property("layers on", layersOn(a), layersOn(b)));
        for (Map.Entry<String, String[]> shape : shapes(a, b).entrySet()) {
            all.add(new Property("shape " + shape.getKey(), shape.getValue()[0], shape.getValue()[1]));
        }
        List<Property> differs = all.stream().filter(Property::differs).toList();
        List<Property> same = all.stream().filter(p -> !p.differs() && !p.name().startsWith("shape ")
                && !p.a().equals(NOT_RECORDED)).toList();
        List<String> notes = new ArrayList<>();
        note(notes, "A", a);
        note(notes, "B", b);
        return new Comparison(differs, same, notes);
    }

    private static void note(List<String> notes, String side, RunRecord run) {
        JsonNode t = run.totals();
        long traced = t.path("op_graphs").asLong();
        long all = t.path("cpu_graph_computes").asLong();
        if (traced > 0 && traced < all) {
            notes.add(String.format(Locale.ROOT, "%s: the operator layer traced %d of %d graphs: its ops' figures "
                    + "are scaled by %.2f", side, traced, all, (double) all / traced));
        }
        if (traced == 0) {
            notes.add(side + ": no graph traced by the operator layer: no op figures");
        }
        if (t.path("lost_events").asLong() > 0) {
            notes.add(side + ": " + t.path("lost_events").asLong() + " probe records lost");
        }
        if (run.intervals("tpot").size() < 4 && t.path("tokens_decode").asLong() > 0) {
            int intervals = run.intervals("tpot").size();
            notes.add(side + ": " + intervals + (intervals == 1 ? " interval" : " intervals") + " with generated tokens:"
                    + " too few for a rank test to call a change significant (shorter intervals with -d, or a longer run)");
        }
    }

    /** The model file: its path, and its size where the snapshot recorded it. */
    static String model(RunRecord run) {
        JsonNode model = run.meta().path("target").path("model");
        String path = run.totals().path("model").asText("not seen");
        if (model.has("bytes") && model.path("bytes").asLong() >= 0) {
            return path + " (" + model.path("bytes").asLong() + " bytes)";
        }
        return path;
    }

    /**
     * The llama.cpp libraries by path with their size and modification time; a --json log does not record them.
     */
    static String build(RunRecord run) {
        JsonNode libraries = run.meta().path("target").path("libraries");
        if (!libraries.isArray() || libraries.isEmpty()) {
            return NOT_RECORDED;
        }
        List<String> parts = new ArrayList<>();
        for (JsonNode library : libraries) {
            parts.add(library.path("path").asText() + " (" + library.path("bytes").asLong() + " bytes, "
                    + library.path("modified").asText("?") + ")");
        }
        return String.join(", ", parts);
    }

    static String layersOn(RunRecord run) {
        List<String> on = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = run.totals().path("layers").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> layer = it.next();
            if (layer.getValue().path("state").asText().equals("on")) {
                on.add(layer.getKey());
            }
        }
        return on.isEmpty() ? "none" : String.join(",", on);
    }

    /** Each op in both runs with its last shape, where the two differ or not (differences are picked later). */
    private static Map<String, String[]> shapes(RunRecord a, RunRecord b) {
        Map<String, String[]> shapes = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = a.totals().path("ops").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> op = it.next();
            JsonNode other = b.totals().path("ops").path(op.getKey());
            if (other.has("last_shape")) {
                shapes.put(op.getKey(), new String[] {op.getValue().path("last_shape").asText(),
                        other.path("last_shape").asText()});
            }
        }
        return shapes;
    }
}
