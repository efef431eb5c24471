package dev.infertop;

import dev.infertop.model.Layer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A layer is data: the classes every layer goes through iterate over the layers' descriptions and name no
 * particular layer in their code (comments may), so that adding a layer touches its own classes and its
 * registration, not them.
 */
class SharedCodeNamesNoLayerTest {
    private static final Path SOURCES = Path.of("src/main/java/dev/infertop");
    private static final List<String> SHARED = List.of("bpf/ProbeSet.java", "agg/TraceAggregator.java");
    private static final Pattern A_LAYER = Pattern.compile("\\bLayer\\.([A-Z][A-Z_]*)\\b");

    @Test
    void sharedClassesNameNoParticularLayer() throws IOException {
        List<String> named = new ArrayList<>();
        for (String file : SHARED) {
            Matcher m = A_LAYER.matcher(LayeringTest.codeOnly(Files.readString(SOURCES.resolve(file))));
            while (m.find()) {
                named.add(file + ": Layer." + m.group(1));
            }
        }
        assertEquals(List.of(), named);
    }

    private static final Pattern A_LAYER_AGGREGATOR = Pattern.compile(
            "(?m)^public (?:final )?class (\\w+)\\b[^{]*\\bimplements\\b[^{]*\\bLayerAggregator\\b");

    /** Every class of agg (and below) that implements LayerAggregator, by its simple name. */
    private static Set<String> layerAggregators() throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(SOURCES.resolve("agg"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher m = A_LAYER_AGGREGATOR.matcher(LayeringTest.codeOnly(Files.readString(file)));
                if (m.find()) {
                    names.add(m.group(1));
                }
            }
        }
        return names;
    }

    /**
     * The router reaches every layer's aggregator by registration, the LayerAggregator stages and the
     * subscriptions its interfaces ask for: naming one in its code (a field, a cast, a with-method) fails here.
     */
    @Test
    void theRouterNamesNoLayersAggregator() throws IOException {
        String router = LayeringTest.codeOnly(Files.readString(SOURCES.resolve("agg/TraceAggregator.java")));
        Set<String> aggregators = layerAggregators();
        assertTrue(aggregators.containsAll(Set.of("RooflineAggregator", "DagRecorder", "OffloadAggregator",
                "BackendOpsAggregator", "TokenAggregator", "OperatorAggregator", "SchedAggregator", "MoeAggregator")),
                "the scan finds the aggregators: " + aggregators);
        List<String> named = new ArrayList<>();
        for (String aggregator : aggregators) {
            if (Pattern.compile("\\b" + aggregator + "\\b").matcher(router).find()) {
                named.add(aggregator);
            }
        }
        assertEquals(List.of(), named, "register them; reach them through LayerAggregator and their interfaces");
    }

    @Test
    void theCheckSeesAnAggregatorNamedInCode() {
        String code = "class X { // OperatorAggregator in a comment\n private OperatorAggregator operators; }";
        assertTrue(Pattern.compile("\\bOperatorAggregator\\b").matcher(LayeringTest.codeOnly(code)).find());
        assertEquals(false, Pattern.compile("\\bOperatorAggregator\\b").matcher(LayeringTest.codeOnly(
                "class X { // OperatorAggregator in a comment\n }")).find());
    }

    @Test
    void theCheckSeesALayerNamedInCode() {
        String code = "class X { // Layer.MOE in a comment\n Object o = Layer." + Layer.MOE.name() + "; }";
        Matcher m = A_LAYER.matcher(LayeringTest.codeOnly(code));
        assertEquals(true, m.find());
        assertEquals("MOE", m.group(1));
        assertEquals(false, m.find());
    }
}
