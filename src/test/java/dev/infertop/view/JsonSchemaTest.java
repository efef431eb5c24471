package dev.infertop.view;

import dev.infertop.model.BackendOps;
import dev.infertop.model.WhisperTotals;
import dev.infertop.json.JsonLinesView;
import dev.infertop.json.SafeJson;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.ManPage;
import dev.infertop.export.SummaryWriter;
import dev.infertop.model.BudgetStatus;
import dev.infertop.model.JsonSchema;
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
        // whisper.cpp's units too (whisper-talk-llama runs both engines): every field at once.
        return RooflinePanelTest.with(s, RooflinePanelTest.totals(RooflinePanelTest.CEILINGS))
                .withFigures(f -> f.withOffload(OffloadFixtures.offload())
                        .withBackendOps(List.of(new BackendOps("Vulkan", 30, 1_000_000, List.of(
                                new BackendOps.Op("MUL_MAT", 30, 0, false)),
                                OffloadPanelTest.dispatch())))
                        .withWhisper(new WhisperTotals(1, 0, 48_000, 0, 2_000_000_000L, 1, 21, 66)));
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
            // A read names its key through the schema (JsonSchema.NAME.key()) or, wrongly, as a literal.
            Matcher m = Pattern.compile("(?<![\\w])" + Pattern.quote(receiver)
                    + "\\.(?:path|get|has|hasNonNull)\\((?:\"([^\"]+)\"|JsonSchema\\.([A-Z][A-Z0-9_]*)\\.key\\(\\))\\)")
                    .matcher(source);
            while (m.find()) {
                keys.add(m.group(1) != null ? m.group(1) : JsonSchema.valueOf(m.group(2)).key());
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

    private static final Path SOURCES = Path.of("src/main/java/dev/infertop");
    private static final String SCHEMA_FILE = "model/JsonSchema.java";

    /** The files that write a line or summary.json: every key they spell must come from JsonSchema. */
    private static final Set<String> WRITERS = Set.of("json/JsonLinesView.java", "json/SchedJson.java",
            "json/CountersJson.java", "json/MoeJson.java", "export/SummaryWriter.java");

    /**
     * Top-level keys that other documents or names share, file by file, each for a reason: the Chrome trace's own
     * {@code pid} and categories, Prometheus label names, the CLI's subcommand, the BPF map, the collector's
     * limits' own field names, the report's, diff's and overhead's own JSON, a tensor-name fragment, a key hint.
     */
    private static final Map<String, Set<String>> OTHER_DOCUMENTS = Map.ofEntries(
            Map.entry("export/ChromeTraceWriter.java", Set.of("pid", "sched")),
            Map.entry("export/MoeTraceEvents.java", Set.of("pid", "moe")),
            Map.entry("metrics/MetricsMapping.java", Set.of("pid", "command", "model")),
            Map.entry("cli/ModelCommand.java", Set.of("model")),
            Map.entry("cli/OverheadCommand.java", Set.of("layers", "decode_tokens_per_s", "tokens_decode")),
            Map.entry("bpf/InfertopProbes.java", Set.of("lost_events")),
            Map.entry("agg/BackendKeys.java", Set.of("backends")),
            Map.entry("agg/SequenceTracker.java", Set.of("contexts")),
            Map.entry("agg/ThreadSlots.java", Set.of("threads")),
            Map.entry("model/TensorGroup.java", Set.of("moe")),
            Map.entry("tui/KeyHelp.java", Set.of("threads")),
            Map.entry("process/layout/LayoutAnswer.java", Set.of("ops")),
            Map.entry("snapshot/SnapshotReport.java", Set.of("snapshot")),
            Map.entry("diff/DiffJson.java", Set.of("ops")),
            Map.entry("diff/RunLoader.java", Set.of("snapshot")));

    /** Every key a nested enum declares. */
    private static Set<String> nestedKeys() {
        Set<String> keys = new TreeSet<>();
        for (Class<? extends JsonSchema.Key> nested : JsonSchema.nestedKeys()) {
            for (JsonSchema.Key key : nested.getEnumConstants()) {
                keys.add(key.key());
            }
        }
        return keys;
    }

    /** The string literals of {@code source}'s code, comments left out. */
    static List<String> literals(String source) {
        List<String> literals = new ArrayList<>();
        StringBuilder code = new StringBuilder();
        for (String line : source.replaceAll("(?s)/\\*.*?\\*/", " ").split("\n")) {
            boolean inString = false;
            int end = line.length();
            for (int i = 0; i < line.length(); i++) {
                char c = line.charAt(i);
                if (inString && c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = !inString;
                } else if (!inString && c == '\'' && i + 2 < line.length()) {
                    i += line.charAt(i + 1) == '\\' ? 3 : 2; // a character literal such as '"'
                } else if (!inString && line.startsWith("//", i)) {
                    end = i;
                    break;
                }
            }
            code.append(line, 0, end).append('\n');
        }
        Matcher m = Pattern.compile("\"((?:[^\"\\\\\\n]|\\\\.)*)\"").matcher(code);
        while (m.find()) {
            literals.add(m.group(1));
        }
        return literals;
    }

    /** What is wrong with {@code file}'s literal keys: top-level keys anywhere, any key in a writer. */
    static List<String> literalKeys(String file, String source) {
        List<String> wrong = new ArrayList<>();
        Set<String> nested = nestedKeys();
        for (String literal : literals(source)) {
            if (JsonSchema.ofKey(literal) != null
                    && !OTHER_DOCUMENTS.getOrDefault(file, Set.of()).contains(literal)) {
                wrong.add(file + ": \"" + literal + "\" is JsonSchema." + JsonSchema.ofKey(literal).name()
                        + ".key()");
            } else if (WRITERS.contains(file) && nested.contains(literal)) {
                wrong.add(file + ": \"" + literal + "\" is a key of a JsonSchema nested enum");
            }
        }
        return wrong;
    }

    /**
     * The reads by literal in a reader that are not of its own report's JSON (a key it also writes by literal):
     * a summary key read that way either has a constant (use it) or is one the schema lacks.
     */
    static List<String> literalReads(String file, String source) {
        Set<String> written = new TreeSet<>();
        Matcher w = Pattern.compile("(?:\\.(?:put|putObject|putArray|putNull|set)\\(|\\bput\\w*\\(\\w+, )\"([^\"]+)\"").matcher(source);
        while (w.find()) {
            written.add(w.group(1));
        }
        List<String> wrong = new ArrayList<>();
        // The histograms by their log tag (a map's get, not a JSON read) are no JSON key.
        Matcher r = Pattern.compile("(histograms\\(\\)|totalsByTag\\(\\))?\\.(?:path|get|has|hasNonNull)\\(\"([^\"]+)\"\\)")
                .matcher(source);
        Set<String> nested = nestedKeys();
        while (r.find()) {
            String key = r.group(2);
            if (r.group(1) == null && !written.contains(key)) {
                wrong.add(file + ": reads \"" + key + "\" by literal ("
                        + (JsonSchema.ofKey(key) != null || nested.contains(key) ? "use its JsonSchema constant"
                        : "a key JsonSchema does not declare") + ")");
            }
        }
        return wrong;
    }

    @Test
    void noSourceSpellsASchemaKeyAsALiteral() throws Exception {
        List<String> wrong = new ArrayList<>();
        List<Path> files;
        try (var walk = Files.walk(SOURCES)) {
            files = walk.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
        for (Path path : files) {
            String file = SOURCES.relativize(path).toString();
            if (!file.equals(SCHEMA_FILE)) {
                wrong.addAll(literalKeys(file, Files.readString(path)));
            }
        }
        for (String file : WRITERS) {
            assertTrue(Files.isRegularFile(SOURCES.resolve(file)), file + " (update WRITERS)");
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void theReadersReadNoKeyByLiteral() throws Exception {
        Set<String> readers = new TreeSet<>(READERS.keySet());
        readers.addAll(List.of("snapshot/DeepLayerReport.java", "snapshot/SnapshotDirectory.java",
                "diff/RunDiff.java"));
        List<String> wrong = new ArrayList<>();
        for (String file : readers) {
            wrong.addAll(literalReads(file, Files.readString(SOURCES.resolve(file))));
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void theLiteralScansFindAPlantedKey() {
        String reader = "long x = t.path(\"cpu_graph_computes\").asLong() + t.path(\"groups\").asLong()"
                + " + t.path(\"no_such_key\").asLong(); // \"ops\" in a comment is fine\n"
                + "node.put(\"recorded\", true); boolean r = node.path(\"recorded\").asBoolean();";
        assertEquals(List.of("diff/X.java: \"cpu_graph_computes\" is JsonSchema.CPU_GRAPH_COMPUTES.key()"),
                literalKeys("diff/X.java", reader));
        assertEquals(3, literalReads("diff/X.java", reader).size(), literalReads("diff/X.java", reader).toString());
        assertEquals(List.of("json/SchedJson.java: \"switches\" is a key of a JsonSchema nested enum"),
                literalKeys("json/SchedJson.java", "t.put(\"switches\", 1);"));
    }

    /** The objects at {@code path} (JsonSchema.OBJECTS' form) under {@code node}. */
    private static List<JsonNode> at(JsonNode node, String path) {
        List<JsonNode> found = new ArrayList<>(List.of(node));
        for (String step : path.split("\\.")) {
            List<JsonNode> next = new ArrayList<>();
            for (JsonNode n : found) {
                if (step.equals("*") || step.equals("[]")) {
                    n.elements().forEachRemaining(next::add);
                } else if (n.has(step)) {
                    next.add(n.get(step));
                }
            }
            found = next;
        }
        return found;
    }

    @Test
    void theWriterWritesTheDeclaredNestedKeysOnly() throws Exception {
        List<JsonNode> lines = new ArrayList<>();
        for (boolean isFinal : new boolean[] {false, true}) {
            lines.add(MAPPER.readTree(JsonLinesView.toJson(everything(isFinal))));
        }
        lines.add(MAPPER.readTree(SafeJson.line(SummaryWriter.json(SnapshotFixtures.content(), List.of(),
                List.of()))));
        Set<String> seen = new TreeSet<>();
        for (Map.Entry<String, Class<? extends JsonSchema.Key>> object : JsonSchema.OBJECTS.entrySet()) {
            Set<String> declared = new TreeSet<>();
            for (JsonSchema.Key key : object.getValue().getEnumConstants()) {
                declared.add(key.key());
            }
            for (JsonNode line : lines) {
                for (JsonNode found : at(line, object.getKey())) {
                    seen.add(object.getKey());
                    Set<String> left = keys(found);
                    left.removeAll(declared);
                    assertEquals(Set.of(), left, object.getKey() + " written, not in " + object.getValue().getSimpleName());
                }
            }
        }
        // A path no fixture reaches proves nothing: the fixtures have every layer on.
        Set<String> unseen = new TreeSet<>(JsonSchema.OBJECTS.keySet());
        unseen.removeAll(seen);
        assertTrue(unseen.size() <= 2, "JsonSchema.OBJECTS paths no fixture line has: " + unseen);
    }
}
