package dev.infertop.view;

import dev.infertop.json.JsonLinesView;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A layer is described once (model.Layer: what it records, its JSON objects; BodyPanel: which panel shows which
 * layer) and the man page's Layers list and JSON FIELDS say the same; no JSON object goes undescribed.
 */
class LayerDescriptionTest {
    private static String section(String man, String start, String nextStart) {
        int from = man.indexOf(start);
        assertTrue(from >= 0, "man page section " + start);
        int to = man.indexOf(nextStart, from + start.length());
        return man.substring(from, to < 0 ? man.length() : to);
    }

    /** The man page's paragraph for a layer in the Layers list. */
    private static String entry(String layers, Layer layer) {
        String tag = ".TP\n.B " + layer.id() + "\n";
        int from = layers.indexOf(tag);
        assertTrue(from >= 0, "man page Layers entry for " + layer.id());
        int to = layers.indexOf(".TP\n", from + tag.length());
        return layers.substring(from, to < 0 ? layers.length() : to).replace("\n", " ");
    }

    @Test
    void theManPageNamesEachLayersPanelsAndJsonObjects() throws Exception {
        String man = Files.readString(Path.of("man/infertop.1"));
        String layers = section(man, ".SS Layers", ".PP");
        String jsonFields = section(man, ".SH JSON FIELDS", ".SH SNAPSHOTS");
        for (Layer layer : Layer.values()) {
            String entry = entry(layers, layer);
            for (String object : layer.jsonSections()) {
                assertTrue(entry.contains("\\fB" + object + "\\fR"), layer.id() + " names " + object + ": " + entry);
                assertTrue(jsonFields.contains("\\fB" + object + "\\fR") || jsonFields.contains("\n.B " + object + "\n"),
                        "JSON FIELDS documents " + object);
            }
            for (BodyPanel panel : BodyPanel.values()) {
                if (panel.layer() == layer) {
                    assertTrue(entry.contains(panel.title()), layer.id() + " names " + panel.title() + ": " + entry);
                }
            }
        }
    }

    /** Every object of a JSON line belongs to a layer, or to the session (its limits, budget and layer states). */
    @Test
    void everyObjectOfAJsonLineIsALayersOrTheSessions() throws Exception {
        JsonNode line = new ObjectMapper().readTree(JsonLinesView.toJson(
                Fixtures.snapshot(LayerStatus.State.ON).withFigures(f -> f.withSched(Fixtures.sched()))));
        Set<String> described = new HashSet<>(Set.of("limits", "budget", "layers", "sampled"));
        for (Layer layer : Layer.values()) {
            described.addAll(layer.jsonSections());
        }
        List<String> objects = new ArrayList<>();
        line.fields().forEachRemaining(field -> {
            if (field.getValue().isObject()) {
                objects.add(field.getKey());
            }
        });
        assertTrue(objects.containsAll(List.of("ttft_ms", "graph_computes", "ops", "sched")), objects.toString());
        assertEquals(List.of(), objects.stream().filter(o -> !described.contains(o)).toList(),
                "objects no layer describes (add them to model.Layer and the man page's Layers list)");
    }
}
