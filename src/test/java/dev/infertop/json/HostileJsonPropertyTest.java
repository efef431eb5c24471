package dev.infertop.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.HostileText;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A JSON line of a snapshot whose every target-chosen name (command, model, op rows, backends and their ops) is
 * a generated hostile string ({@link HostileText}): one line, nothing in it that acts on a terminal, valid JSON
 * (a strict parser reads it back) that decodes to the names the snapshot holds.
 */
class HostileJsonPropertyTest {
    private static final ObjectMapper STRICT = new ObjectMapper();

    @Test
    void aSnapshotOfHostileNamesIsOneLineOfValidJson() throws Exception {
        Random random = new Random(0x15011e5L);
        for (int i = 0; i < 1_000; i++) {
            TargetInfo target = new TargetInfo(4242, HostileText.next(random, 40), HostileText.next(random, 60),
                    List.of());
            String op = "op " + HostileText.next(random, 24); // never the other row's name: one object each
            String shape = HostileText.next(random, 30);
            String backend = HostileText.next(random, 24);
            Snapshot snapshot = Fixtures.snapshot(LayerStatus.State.ON, target,
                    List.of(Fixtures.op(op, 10, 5, 0.1, 0.2, 0.3, shape),
                            Fixtures.op("other " + HostileText.next(random, 24), 10, 5, 0.1, 0.2, 0.3, "x [1,1,1,1]")))
                    .withFigures(f -> f.withBackends(List.of(new BackendTotals(backend, 7, 70, 1_000_000)),
                            List.of(new BackendOps(backend, 7, 1_000_000,
                                    List.of(new BackendOps.Op(op, 70, 1_000_000, true))))));
            for (Snapshot shown : List.of(snapshot, snapshot.withState(RunState.EXITED))) {
                String line = JsonLinesView.toJson(shown);
                assertNull(HostileText.firstForbidden(line, ""), line); // no line feed among them: one line
                JsonNode json = STRICT.readTree(line);
                assertEquals(shown.isFinal() ? "total" : "interval", json.get("scope").textValue());
                assertEquals(target.command(), json.get("command").textValue());
                assertEquals(target.modelFile(), json.get("model").textValue());
                assertEquals(shape, json.get("ops").get(op).get("last_shape").textValue(), line);
                assertTrue(json.get("graph_computes").has(backend), line);
                assertTrue(hasField(json.get("backends"), backend), line);
            }
        }
    }

    /** Whether some object in {@code node} has a field named {@code name} (JSON escapes decoded). */
    private static boolean hasField(JsonNode node, String name) {
        if (node.isObject() && node.has(name)) {
            return true;
        }
        for (JsonNode child : node) {
            if (hasField(child, name)) {
                return true;
            }
        }
        return false;
    }
}
