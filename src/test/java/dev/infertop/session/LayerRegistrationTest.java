package dev.infertop.session;

import dev.infertop.io.ConfigFiles;
import dev.infertop.bpf.ProbeLayer;
import dev.infertop.model.Layer;
import dev.infertop.process.layout.CalibratedLayout;
import dev.infertop.view.BodyPanel;
import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A layer is one unit, registered once in each package that has a part of it (the packages' layering keeps those
 * parts apart: views import no aggregator, model and bpf import neither): model's {@link Layer} (what it records,
 * its JSON objects), bpf's {@link ProbeLayer} (its probes and kernel side), the aggregators {@link Pipeline}
 * registers with the trace aggregator, and view's {@link BodyPanel} (its panel). A layer added to {@link Layer}
 * and left out of any of them fails here.
 */
class LayerRegistrationTest {
    @Test
    void everyLayerDescribesWhatItRecordsAndItsJsonObjects() {
        for (Layer layer : Layer.values()) {
            assertFalse(layer.description().isBlank(), layer.id());
            assertFalse(layer.jsonSections().isEmpty(), layer.id() + " names the JSON objects its figures fill");
        }
    }

    @Test
    void everyLayerHasItsProbesAndKernelSide() {
        for (Layer layer : Layer.values()) {
            ProbeLayer description = ProbeLayer.of(layer);
            assertSame(layer, description.layer(), layer.id());
            assertTrue(description.kernelSide() != null, layer.id());
            assertTrue(!description.probes().isEmpty() || description.needs() != null
                    || layer == Layer.COUNTERS, // perf events, switched by the session's PerfCounters
                    layer.id() + " has probes of its own, or reads at a layer it needs");
        }
    }

    @Test
    void everyLayerHasAnAggregatorRegistered() {
        CalibratedLayout layout = SyntheticDecodeStreamTest.layout(SyntheticDecodeStreamTest.OPS);
        Pipeline pipeline = Pipeline.build(layout, ConfigFiles.backendNames(), 0, () -> 0,
                (signature, groups, ids, layers) -> false, address -> "");
        // The token layer's llama.cpp records are the trace aggregator's own (tokens, TTFT, TPOT, sequences); whisper's
        // units are an aggregator of the token layer's registered beside them.
        Set<Layer> expected = EnumSet.allOf(Layer.class);
        assertEquals(expected, pipeline.aggregator().aggregatedLayers());
    }

    @Test
    void everyLayerHasAPanel() {
        Set<Layer> shown = EnumSet.noneOf(Layer.class);
        for (BodyPanel panel : BodyPanel.values()) {
            shown.add(panel.layer());
        }
        assertEquals(EnumSet.allOf(Layer.class), shown);
    }
}
