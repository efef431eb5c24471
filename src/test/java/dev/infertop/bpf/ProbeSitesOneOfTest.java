package dev.infertop.bpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.infertop.model.Layer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The token layer needs llama_decode or llama_process ({@link ProbeSpec#ONE_OF}): each is optional on its own, so
 * only this check stops a libllama that exports neither from attaching a token layer that would report nothing.
 */
class ProbeSitesOneOfTest {
    private static final Path LIBLLAMA = Path.of("/usr/lib/x86_64-linux-gnu/libllama.so.0");
    private static final List<ProbeSpec> TOKEN = ProbeSpec.of(Layer.TOKEN);
    private static final String NEITHER = "no library exports llama_decode or llama_process or whisper_full_with_state"
            + " (not a llama.cpp or whisper.cpp program, or a library too old, too new or stripped of its exports?)";

    private static ProbeSpec tokenFunction(String symbol) {
        return TOKEN.stream().filter(s -> s instanceof ProbeSpec.FunctionProbe f && f.symbol().equals(symbol))
                .findFirst().orElseThrow();
    }

    /**
     * As ProbeSet plans a layer: every probe has an entry, an empty map where no library had a site for it (a
     * library enters the map only with sites).
     */
    private static Map<ProbeSpec, Map<Path, List<ProbeSites.Site>>> planWithSitesFor(List<ProbeSpec> layer,
                                                                                    String... symbols) {
        Map<ProbeSpec, Map<Path, List<ProbeSites.Site>>> plan = new LinkedHashMap<>();
        for (ProbeSpec spec : layer) {
            plan.put(spec, Map.of());
        }
        for (String symbol : symbols) {
            plan.put(tokenFunction(symbol), Map.of(LIBLLAMA,
                    List.of(new ProbeSites.Site(symbol, 0x4a2f0, "exported by " + LIBLLAMA))));
        }
        return plan;
    }

    @Test
    void eitherEntryPointWithSitesIsEnough() {
        assertNull(ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN, "llama_process"), List.of()),
                "llama_process alone (tools of newer releases call only it)");
        assertNull(ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN, "llama_decode"), List.of()),
                "llama_decode alone (releases before llama_process)");
        assertNull(ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN, "llama_decode", "llama_process"),
                List.of()), "both");
    }

    /**
     * A whisper.cpp program (whisper-cli on libwhisper, no libllama): its transcription call is the token layer's
     * entry point, and the reason a layer has none blames no llama.cpp library.
     */
    @Test
    void whispersTranscriptionCallIsAnEntryPointAndTheReasonNamesBothRuntimes() {
        assertNull(ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN, "whisper_full_with_state"), List.of()),
                "whisper_full_with_state alone (whisper-cli)");
        String reason = ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN, "whisper_pcm_to_mel_with_state"),
                List.of());
        assertEquals(NEITHER, reason, "the mel spectrogram alone is not an entry point");
        org.junit.jupiter.api.Assertions.assertFalse(reason.contains("a llama.cpp library"), reason);
    }

    @Test
    void neitherEntryPointGivesTheReasonEvenWithTheLayersOtherProbesFound() {
        assertEquals(NEITHER, ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN), List.of()), "nothing found");
        // the batch builders and seq_rm are in the same layer but are not entry points: they do not count
        assertEquals(NEITHER, ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN, "llama_batch_ext_init",
                "llama_batch_ext_add", "llama_memory_seq_rm"), List.of()), "only non-entry-point probes found");
        // a layer given no plan entries at all (every probe absent) reads the same
        assertEquals(NEITHER, ProbeSites.noneOfFound(TOKEN, Map.of(), List.of()), "no plan entries");
    }

    @Test
    void anEntryPointAttachedBeforeCountsWhenNothingIsPlannedNow() {
        // a later library mapped in (dlopen) replans the layer: the entry point attached to the first one is
        // not planned again, and the layer stays attached
        for (String symbol : List.of("llama_process", "llama_decode")) {
            List<List<String>> attached = List.of(
                    List.of(ProbeSites.key(tokenFunction("llama_batch_ext_init"))),
                    List.of(ProbeSites.key(tokenFunction("llama_memory_seq_rm")),
                            ProbeSites.key(tokenFunction(symbol))));
            assertNull(ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN), attached), symbol + " attached before");
        }
        // keys of the layer's other probes attached before are not an entry point
        List<List<String>> others = List.of(List.of(ProbeSites.key(tokenFunction("llama_batch_ext_init")),
                ProbeSites.key(tokenFunction("llama_batch_ext_add"))));
        assertEquals(NEITHER, ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN), others), "others attached");
        // an entry point's key is fn:symbol:program, not the bare symbol
        assertEquals("fn:llama_process:handle_process_enter", ProbeSites.key(tokenFunction("llama_process")));
        assertEquals(NEITHER, ProbeSites.noneOfFound(TOKEN, planWithSitesFor(TOKEN),
                List.of(List.of("llama_process", "llama_decode"))), "bare symbols are not keys");
    }

    @Test
    void aLayerWithoutOneOfMembersNeverNeedsThem() {
        for (Layer layer : List.of(Layer.GRAPH, Layer.OPERATOR, Layer.SCHED)) {
            List<ProbeSpec> probes = ProbeSpec.of(layer);
            Map<ProbeSpec, Map<Path, List<ProbeSites.Site>>> nothingFound = new LinkedHashMap<>();
            for (ProbeSpec spec : probes) {
                nothingFound.put(spec, Map.of());
            }
            assertNull(ProbeSites.noneOfFound(probes, nothingFound, List.of()), layer + " with nothing found");
        }
        // the token layer's own check, given the graph layer's probes, has no group member to miss
        assertNull(ProbeSites.noneOfFound(ProbeSpec.of(Layer.GRAPH), planWithSitesFor(TOKEN), List.of()),
                "graph probes, token plan without entry points");
    }
}
