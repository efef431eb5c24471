package dev.infertop.json;

import dev.infertop.model.BudgetStatus;
import dev.infertop.model.HitCost;
import dev.infertop.model.LayerStatus;
import dev.infertop.view.SchedPanel;

import dev.infertop.view.Fixtures;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infertop.model.Snapshot;
import dev.infertop.model.SchedTotals;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The sched object of a JSON line, from the fixture's figures (a 1 s interval), field by field. */
class SchedJsonTest {
    private static Snapshot withSched(SchedTotals sched) {
        Snapshot s = Fixtures.snapshot(LayerStatus.State.ON);
        return s.withFigures(f -> f.withSched(sched));
    }

    @Test
    void theSchedCostUsesTheTracepointRunTimeTheKernelMeasured() throws Exception {
        Snapshot measured = withSched(Fixtures.sched()).withBudget(new BudgetStatus(1, 1.0, 1.0, 1,
                "every graph", 1.0, new HitCost(5_500, true, 450)));
        JsonNode sched = new ObjectMapper().readTree(JsonLinesView.toJson(measured)).get("sched");
        assertEquals(0.009, sched.get("est_cost_core_fraction").asDouble(), 1e-12); // 20 000 x 450 ns in 1 s
        org.junit.jupiter.api.Assertions.assertTrue(SchedPanel.heading(measured.interval().sched(),
                1_000_000_000L, measured.budget().hitCost()).endsWith("~0.90% cpu (est.)"));
    }

    @Test
    void schedFieldsCarryThreadStatesOpsAndInterferers() throws Exception {
        JsonNode sched = new ObjectMapper().readTree(JsonLinesView.toJson(withSched(Fixtures.sched()))).get("sched");
        assertEquals(1300, sched.get("records").asLong());
        assertEquals(1300.0, sched.get("records_per_s").asDouble());
        assertEquals(20_000, sched.get("kernel_hits").asLong());
        assertEquals(0.006, sched.get("est_cost_core_fraction").asDouble(), 1e-12); // 20 000 x 300 ns (nothing measured) in 1 s
        assertEquals(1_400_000_000L, sched.get("running_ns").asLong());
        assertEquals(400_000_000L, sched.get("runnable_ns").asLong());
        assertEquals(200_000_000L, sched.get("sleeping_ns").asLong());
        JsonNode thread = sched.get("threads").get("101");
        assertEquals(600_000_000L, thread.get("running_ns").asLong());
        assertEquals(300_000_000L, thread.get("runnable_ns").asLong());
        assertEquals(100_000_000L, thread.get("sleeping_ns").asLong());
        assertEquals(50, thread.get("switches").asLong());
        assertEquals(30, thread.get("preemptions").asLong());
        assertEquals(250_000_000L, sched.get("ops").get("MUL_MAT").get("runnable_ns").asLong());
        assertEquals(20_000_000L, sched.get("ops").get("MUL_MAT").get("sleeping_ns").asLong());
        JsonNode hog = sched.get("interferers").get(0);
        assertEquals(777, hog.get("pid").asInt());
        assertEquals("hog", hog.get("comm").asText());
        assertEquals(330_000_000L, hog.get("ns").asLong());
        assertEquals(0.825, hog.get("wait_share").asDouble(), 1e-12);
        assertEquals(false, hog.get("same_process").asBoolean());
        assertEquals(true, sched.get("interferers").get(2).get("same_process").asBoolean());
    }

    @Test
    void anOffLayerGivesZerosAndEmptyLists() throws Exception {
        JsonNode sched = new ObjectMapper().readTree(JsonLinesView.toJson(withSched(SchedTotals.EMPTY))).get("sched");
        assertEquals(0, sched.get("runnable_ns").asLong());
        assertEquals(0, sched.get("threads").size());
        assertEquals(0, sched.get("interferers").size());
    }
}
