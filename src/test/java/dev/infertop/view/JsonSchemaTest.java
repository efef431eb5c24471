package dev.infertop.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.ManPage;
import dev.infertop.export.SummaryWriter;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.Layer;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.RunState;
import dev.infertop.model.Snapshot;
import dev.infertop.model.TargetInfo;
import dev.infertop.snapshot.SnapshotFixtures;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JSON Lines object's top-level fields are declared once (JsonSchema): what JsonLinesView and SummaryWriter
 * write, what the readers read and what man/infertop.1's JSON FIELDS documents are each held to that list.
 */
class JsonSchemaTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Every layer on, with figures in each: roofline with ceilings, sched, counters, MoE, a measured budget. */
    private static Snapshot everything(boolean isFinal) {
        Snapshot s = CountersPanelTest.with(new LayerStatus(Layer.COUNTERS, LayerStatus.State.ON, "", List.of()),
                CountersPanelTest.hardware(), isFinal);
        List<LayerStatus> layers = new ArrayList<>(s.layers());
        layers.add(new LayerStatus(Layer.SCHED, LayerStatus.State.ON, "", List.of()));
        layers.add(new LayerStatus(Layer.MOE, LayerStatus.State.ON, "", List.of()));
        s = s.withLayers(layers).withMoe(MoePanelTest.moe()).withFigures(f -> f.withSched(Fixtures.sched()))
                .withBudget(new BudgetStatus(1, 0.9, 3.2, 0.25, "1.0 s of every 4.0 s"));
        return RooflinePanelTest.with(s, RooflinePanelTest.totals(RooflinePanelTest.CEILINGS));
    }

    /** Only the token and graph layers, no model file mapped yet, no budget. */
    private static Snapshot bare(boolean isFinal) {
        return Fixtures.snapshot(LayerStatus.State.OFF, new TargetInfo(4242, "llama-cli", null, List.of()), List.of())
                .withState(isFinal ? RunState.EXITED : RunState.RUNNING);
    }

    private static Set<String> keys(JsonNode object) {
        Set<String> keys = new TreeSet<>();
        object.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    private static Set<String> lineKeys(Snapshot s) throws Exception {
        return keys(MAPPER.readTree(JsonLinesView.toJson(s)));
    }

    private static Set<String> declared(boolean withSummaryOnly) {
        Set<String> keys = new TreeSet<>();
        for (JsonSchema field : JsonSchema.values()) {
            if (withSummaryOnly || !field.summaryOnly()) {
                keys.add(field.key());
            }
        }
        return keys;
    }

    private static Set<String> undeclared(Set<String> keys) {
        Set<String> left = new TreeSet<>(keys);
        left.removeAll(declared(true));
        return left;
    }

    @Test
    void theWriterWritesTheDeclaredFieldsOnly() throws Exception {
        Set<String> written = new TreeSet<>();
        for (boolean isFinal : new boolean[] {false, true}) {
            Set<String> rich = lineKeys(everything(isFinal));
            assertEquals(Set.of(), undeclared(rich), "written, not in JsonSchema");
            written.addAll(rich);
        }
        Set<String> neverWritten = declared(false);
        neverWritten.removeAll(written);
        assertEquals(Set.of(), neverWritten, "declared, but no line with every layer on has it");
    }

    @Test
    void everyLineHasTheFieldsDeclaredAlways() throws Exception {
        for (Snapshot s : List.of(bare(false), bare(true), everything(false), everything(true))) {
            Set<String> keys = lineKeys(s);
            for (JsonSchema field : JsonSchema.values()) {
                if (field.always()) {
                    assertTrue(keys.contains(field.key()), field.key() + " missing from " + keys);
                }
            }
            assertEquals(Set.of(), undeclared(keys), "written, not in JsonSchema");
        }
        // The optional fields are optional indeed: the bare line has none of them.
        Set<String> bare = lineKeys(bare(false));
        for (JsonSchema field : JsonSchema.values()) {
            if (!field.always()) {
                assertFalse(bare.contains(field.key()), field.key() + " is declared optional (" + field.presentWhen()
                        + ") yet a bare line has it");
            }
        }
    }

    @Test
    void summaryJsonWritesTheDeclaredFieldsOnly() throws Exception {
        JsonNode summary = MAPPER.readTree(SafeJson.line(SummaryWriter.json(SnapshotFixtures.content(), List.of(),
                List.of())));
        Set<String> keys = keys(summary);
        assertEquals(Set.of(), undeclared(keys), "summary.json writes, not in JsonSchema");
        assertTrue(keys.contains(JsonSchema.SNAPSHOT.key()), keys.toString());
        for (JsonSchema field : JsonSchema.values()) {
            assertTrue(!field.always() || keys.contains(field.key()), field.key() + " missing from summary.json");
        }
    }

    @Test
    void theManPageDocumentsEveryDeclaredFieldAndNoOther() {
        String man = ManPage.text();
        List<String> documented = ManPage.tagNames(ManPage.section(man, "JSON FIELDS"));
        assertTrue(documented.size() > 20, "JSON FIELDS parsed: " + documented);
        Set<String> notDeclared = new TreeSet<>(documented);
        notDeclared.removeAll(declared(false));
        assertEquals(Set.of(), notDeclared, "man/infertop.1 JSON FIELDS documents, JsonSchema does not declare");
        Set<String> undocumented = declared(false);
        documented.forEach(undocumented::remove);
        assertEquals(Set.of(), undocumented, "JsonSchema declares, man/infertop.1 JSON FIELDS does not document "
                + "(one .B line per entry, names separated by commas)");
        String snapshots = ManPage.section(man, "SNAPSHOTS");
        int summary = snapshots.indexOf("\n.I summary.json\n");
        assertTrue(summary >= 0, "SNAPSHOTS has a summary.json entry");
        for (JsonSchema field : JsonSchema.values()) {
            if (field.summaryOnly()) {
                assertTrue(snapshots.substring(summary, snapshots.indexOf("\n.TP", summary + 1))
                        .contains("\\fB" + field.key() + "\\fR"), "summary.json's entry documents " + field.key());
            }
        }
    }

    /**
     * Source files that read a JSON line or summary.json, each with the expressions that hold the whole object:
     * a top-level read is {@code receiver.path("key")} (or get, has, hasNonNull) on one of them.
     */
    private static final Map<String, List<String>> READERS = Map.ofEntries(
            Map.entry("diff/RunLoader.java", List.of("node", "summary()")),
            Map.entry("diff/RunMetrics.java", List.of("t")),
            Map.entry("diff/Identity.java", List.of("t", "totals()")),
            Map.entry("diff/Experts.java", List.of("totals")),
            Map.entry("diff/DiffHtml.java", List.of("totals()")),
            Map.entry("snapshot/SummarySnapshot.java", List.of("s")),
            Map.entry("snapshot/SnapshotReport.java", List.of("s")),
            Map.entry("snapshot/DeepLayerSummary.java", List.of("summary")),
            Map.entry("snapshot/MoeSummary.java", List.of("summary")),
            Map.entry("snapshot/RooflineSummary.java", List.of("summary")),
            Map.entry("cli/OverheadCommand.java", List.of("last")));

    /** The keys {@code source} reads at the top level through {@code receivers}. */
    static Set<String> topLevelReads(String source, List<String> receivers) {
        Set<String> keys = new TreeSet<>();
        for (String receiver : receivers) {
            Matcher m = Pattern.compile("(?<![\\w])" + Pattern.quote(receiver)
                    + "\\.(?:path|get|has|hasNonNull)\\(\"([^\"]+)\"\\)").matcher(source);
            while (m.find()) {
                keys.add(m.group(1));
            }
        }
        return keys;
    }

    @Test
    void theReadersReadDeclaredFieldsOnly() throws Exception {
        for (Map.Entry<String, List<String>> reader : READERS.entrySet()) {
            String source = Files.readString(Path.of("src/main/java/dev/infertop", reader.getKey()));
            Set<String> read = topLevelReads(source, reader.getValue());
            // A reader whose variables were renamed would read nothing here and prove nothing.
            assertFalse(read.isEmpty(), reader.getKey() + ": no top-level read through " + reader.getValue()
                    + " (update READERS)");
            assertEquals(Set.of(), undeclared(read), reader.getKey() + " reads fields JsonSchema does not declare");
        }
    }

    @Test
    void theReaderScanFindsAnUndeclaredRead() {
        String source = "long x = t.path(\"tokens_decode\").asLong() + t.path(\"token_decode\").asLong()"
                + " + op.path(\"groups\").asLong() + t.path(\"ops\").path(\"nested\").asLong();";
        Set<String> read = topLevelReads(source, List.of("t"));
        assertEquals(new TreeSet<>(Arrays.asList("ops", "token_decode", "tokens_decode")), read);
        assertEquals(Set.of("token_decode"), undeclared(read));
    }
}
