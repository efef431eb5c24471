package dev.infertop.view;

import dev.infertop.json.JsonLinesView;
import com.googlecode.lanterna.TerminalSize;
import com.googlecode.lanterna.screen.Screen;
import com.googlecode.lanterna.screen.TerminalScreen;
import com.googlecode.lanterna.terminal.virtual.DefaultVirtualTerminal;
import dev.infertop.model.BackendOps;
import dev.infertop.model.BackendTotals;
import dev.infertop.model.LayerStatus;
import dev.infertop.model.OffloadTotals;
import dev.infertop.model.Snapshot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static dev.infertop.view.Fixtures.find;
import static dev.infertop.view.Fixtures.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The backends panel (key b) of a partly offloaded run: each backend's enqueue time in its row, and under it
 * device-complete time (or "enqueue only"), the host's waits and the bytes copied in; then the copied tensors.
 */
class OffloadPanelTest {
    private DefaultVirtualTerminal terminal;
    private TerminalScreen screen;
    private final UiState ui = new UiState();

    static Snapshot vulkanSnapshot(OffloadTotals offload) {
        return vulkanSnapshot(offload, null);
    }

    /** 40 Vulkan graphs of a MUL_MAT and an ADD each; with {@code dispatch}, followed node by node. */
    static Snapshot vulkanSnapshot(OffloadTotals offload, BackendOps.NodeDispatch dispatch) {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        List<BackendTotals> backends = List.of(new BackendTotals("CPU", 40, 4_000, 50_000_000L),
                new BackendTotals("Vulkan", 40, 160, 12_000_000L));
        List<BackendOps> vulkan = List.of(new BackendOps("Vulkan", 40, 12_000_000L, List.of(
                new BackendOps.Op("MUL_MAT", 40, 0, false), new BackendOps.Op("ADD", 40, 0, false)), dispatch));
        return s.withFigures(f -> f.withBackends(backends, vulkan).withOffload(offload));
    }

    static BackendOps.NodeDispatch dispatch() {
        return OffloadFixtures.nodeDispatch();
    }

    @Test
    void aDeviceFollowedNodeByNodeSaysItsDispatchesAndFusedNodesAndOneNotFollowedSaysSo() throws IOException {
        render(vulkanSnapshot(OffloadFixtures.offload(), dispatch()));
        int vulkan = after(find(terminal, "BACKEND / OP"), " Vulkan ");
        assertEquals("   host dispatch: 40 dispatches, 20 nodes fused into them, over 30 graphs followed node by node",
                row(terminal, vulkan + 2).stripTrailing());
        int add = after(vulkan, "   ADD ");
        assertTrue(row(terminal, add).stripTrailing().endsWith(" 40  20 fused"), row(terminal, add));
        int mulMat = after(vulkan, "   MUL_MAT ");
        assertFalse(row(terminal, mulMat).contains("fused"), row(terminal, mulMat));

        assertEquals("host dispatch per node: no graph followed in this span (only in the operator layer's windows)",
                BackendsPanel.dispatchLine(new BackendOps.NodeDispatch(0, List.of())));
        render(vulkanSnapshot(OffloadFixtures.offload()));
        vulkan = after(find(terminal, "BACKEND / OP"), " Vulkan ");
        assertTrue(row(terminal, vulkan + 2).startsWith("   host dispatch per node: not seen"), row(terminal, vulkan + 2));
        int cpu = after(find(terminal, "BACKEND / OP"), " CPU ");
        assertFalse(row(terminal, cpu + 2).contains("host dispatch"), "the CPU computes in the call: "
                + row(terminal, cpu + 2));
    }

    private void render(Snapshot snapshot) throws IOException {
        terminal = new DefaultVirtualTerminal(new TerminalSize(100, 30));
        screen = new TerminalScreen(terminal);
        screen.startScreen();
        ui.body = BodyPanel.BACKENDS;
        new MonitorScreen(Theme.COLOUR, List.of("1", "2", "3"), List.of(new HelpPanel.Entry(List.of("q"), "quit")),
                "h help  q quit").draw(screen.newTextGraphics(), snapshot, ui);
        screen.refresh(Screen.RefreshType.DELTA);
    }

    @AfterEach
    void stop() throws IOException {
        if (screen != null) {
            screen.stopScreen();
        }
    }

    private int after(int from, String prefix) {
        for (int r = from + 1; r < terminal.getTerminalSize().getRows(); r++) {
            if (row(terminal, r).startsWith(prefix)) {
                return r;
            }
        }
        return -1;
    }

    @Test
    void eachBackendSaysEnqueueAndDeviceTimeApartAndTheCopiesAreListed() throws IOException {
        render(vulkanSnapshot(OffloadFixtures.offload()));
        int heading = find(terminal, "BACKEND / OP");
        assertTrue(row(terminal, heading).contains("ENQUEUE ms"), row(terminal, heading));
        int vulkan = after(heading, " Vulkan ");
        // 80 copies of 81920 bytes over 40 Vulkan graphs: 2048 bytes in per graph; the CPU got none.
        assertTrue(row(terminal, vulkan).matches(" Vulkan\\s+40\\s+12\\.00\\s+1\\.2%\\s+160\\s+2048 B\\s*"),
                row(terminal, vulkan));
        assertEquals("   device-complete 30.00 ms over 38 graphs (enqueue 11.00); host wait 17.00 ms/45; in 80 KiB",
                row(terminal, vulkan + 1).stripTrailing());
        int cpu = after(heading, " CPU ");
        assertTrue(row(terminal, cpu).stripTrailing().endsWith(" -"), row(terminal, cpu));
        assertTrue(row(terminal, cpu + 1).startsWith("   computes in the call: enqueue is compute"),
                row(terminal, cpu + 1));
        int copies = after(heading, " COPIED TENSOR");
        assertTrue(copies > vulkan && copies > cpu, "the copies table below the backends");
        assertTrue(row(terminal, copies + 1).matches(" ffn_inp-1\\s+Vulkan0\\s+40\\s+40 KiB\\s+1024\\s*"),
                row(terminal, copies + 1));
    }

    @Test
    void whatStayedOnTheCpuIsListedPerGraphWithWhatMovingTheRestCost() throws IOException {
        render(vulkanSnapshot(OffloadFixtures.offload()));
        int stayed = find(terminal, "STAYED ON THE CPU");
        assertTrue(stayed > after(find(terminal, "BACKEND / OP"), " CPU "), "below the backends");
        // 40 CPU graphs: inp_embd ran in each, Qcur-0 in every other one.
        assertTrue(row(terminal, stayed + 1).matches(" inp_embd\\s+GET_ROWS\\s+256x16x1x1\\s+1\\.00\\s*"),
                row(terminal, stayed + 1));
        assertTrue(row(terminal, stayed + 2).matches(" Qcur-0\\s+MUL_MAT\\s+256x16x1x1\\s+0\\.50\\s*"),
                row(terminal, stayed + 2));
        // 32 prompt tokens' copies of 1040 bytes each, 8 generated tokens' of 1044; the host waited for Vulkan only.
        assertEquals("   cost: copied per prompt token 1040 B, per generated token 1044 B; device waits 17.00 ms/45",
                row(terminal, stayed + 3).stripTrailing());
        assertTrue(after(stayed, " COPIED TENSOR") > stayed, "the copies below");
    }

    @Test
    void withoutADecodeCallThePerTokenCostSaysSoAndNotZero() {
        OffloadTotals o = OffloadFixtures.offload();
        OffloadTotals none = new OffloadTotals(o.backends(), o.copies(), 0, o.dispatch(),
                OffloadTotals.TokenBytes.NONE, o.stayedOnCpu());
        assertEquals("cost: copied per token: no llama_decode seen; device waits 17.00 ms/45",
                BackendsPanel.costLine(none));
        assertTrue(Double.isNaN(OffloadTotals.TokenBytes.NONE.bytesPerPromptToken()));
    }

    @Test
    void aDeviceThatComputedBesideTheCpuWithNoCopySeenHasItsCopiesUnseenNotZero() throws IOException {
        OffloadTotals o = OffloadFixtures.offload();
        OffloadTotals.Backend v = o.backend("Vulkan");
        OffloadTotals noCopies = new OffloadTotals(List.of(new OffloadTotals.Backend("Vulkan", v.completion(),
                v.graphs(), v.enqueueNs(), v.completedGraphs(), v.completedEnqueueNs(), v.deviceNs(), v.waits(),
                v.waitNs(), 0, 0, 0), o.backend("CPU")), List.of(), 0, o.dispatch(), o.perToken(), o.stayedOnCpu());
        assertEquals(List.of("Vulkan"), noCopies.backendsWithCopiesUnseen());
        assertEquals(List.of(), o.backendsWithCopiesUnseen(), "copies were seen");
        render(vulkanSnapshot(noCopies));
        int vulkan = after(find(terminal, "BACKEND / OP"), " Vulkan ");
        assertTrue(row(terminal, vulkan).stripTrailing().endsWith(" unseen"), row(terminal, vulkan));
        assertTrue(BackendsPanel.costLine(noCopies).startsWith("cost: copies into Vulkan unseen"),
                BackendsPanel.costLine(noCopies));
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                JsonLinesView.toJson(vulkanSnapshot(noCopies)));
        assertTrue(json.get("offload").get("backends").get("Vulkan").get("copies_unseen").asBoolean());
        assertTrue(!json.get("offload").get("per_token").has("bytes_in_per_prompt_token"), json.toString());
    }

    @Test
    void aBackendWithoutASynchronizeSaysEnqueueOnly() throws IOException {
        OffloadTotals enqueueOnly = new OffloadTotals(List.of(new OffloadTotals.Backend("Vulkan",
                OffloadTotals.Completion.ENQUEUE_ONLY, 40, 12_000_000, 0, 0, 0, 0, 0, 0, 0, 0)), List.of(), 0);
        render(vulkanSnapshot(enqueueOnly));
        int vulkan = after(find(terminal, "BACKEND / OP"), " Vulkan ");
        assertTrue(row(terminal, vulkan + 1).startsWith("   enqueue only: no synchronize of it seen, device time"
                + " unknown"), row(terminal, vulkan + 1));
    }
}
