package dev.infertop.agg;

import dev.infertop.agg.graph.CpuGraph;
import dev.infertop.agg.graph.CpuGraphAssembler;
import dev.infertop.event.EventLayout;
import dev.infertop.event.NameTable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The MoE layer's two planners on the same graphs: native/moe.bpf.h's moe_on_node (BPF plans a graph while the
 * operator layer walks it, where the release has the COMPUTE flag) and {@link MoePlanner}'s plan (user
 * space plans the graphs BPF did not). The header is compiled unchanged with the host C compiler
 * (src/test/c/moe_planner_harness.c stands in for libbpf's maps and the target's memory), so what is compared
 * is the code the kernel runs.
 *
 * <p>Per graph: the plans field by field (BPF's group key, ids tensor, model layer), then where a thread running
 * the graph's node groups sends the ids, with BPF's plan and with user space's written into BPF's maps (moe_on_fused
 * and moe_on_arrival number the groups): both must be the arrival indices user space expects reads at, or every
 * such graph counts as without ids.
 */
class MoePlannerAgreementTest {
    private static final int NONE = 0;
    private static final int MUL_MAT = 1;
    private static final int MUL_MAT_ID = 2;
    private static final int VIEW = 3;
    private static final int RMS_NORM = 4;
    private static final int MUL = 5;
    private static final int ARGSORT = 6;
    private static final int GET_ROWS = 7;
    private static final int GLU = 8;
    private static final int ADD = 9;
    private static final List<String> OPS =
            List.of("NONE", "MUL_MAT", "MUL_MAT_ID", "VIEW", "RMS_NORM", "MUL", "ARGSORT", "GET_ROWS", "GLU", "ADD");
    private static final Set<Integer> EMPTY_OPS = Set.of(NONE, VIEW);
    private static final int COMPUTE = 16;

    private static Path harness;

    @BeforeAll
    static void compileTheBpfPlanner() throws Exception {
        Path dir = Files.createTempDirectory("infertop-moe-planner");
        harness = dir.resolve("moe-planner");
        // No skip: a machine that builds the BPF objects has a C compiler and linux/bpf.h.
        run(dir, null, "cc", "-O1", "-Wall", "-Werror", "-Wno-pointer-arith", "-I",
                Path.of("native").toAbsolutePath().toString(), "-o", harness.toString(),
                Path.of("src/test/c/moe_planner_harness.c").toAbsolutePath().toString());
    }

    /** A node as both planners read it; {@code name} null when the target's memory could not be read. */
    private record Node(long tensor, int op, int flags, long ids, byte[] name) {}

    /** A graph: its nodes and the fused calls (first node index, next node index) the loop made. */
    private static final class Graph {
        final List<Node> nodes = new ArrayList<>();
        final List<int[]> fused = new ArrayList<>();
        private long nextTensor = 0x7f00_0000_1000L;

        Graph node(int op, int flags, long ids, String name) {
            return node(op, flags, ids, name == null ? null : name.getBytes(StandardCharsets.UTF_8));
        }

        Graph node(int op, int flags, long ids, byte[] name) {
            nodes.add(new Node(nextTensor, op, flags, ids, name));
            nextTensor += 0x200;
            return this;
        }

        /** The last two nodes ran as one fused call. */
        Graph fuseLastTwo() {
            fused.add(new int[] {nodes.size() - 2, nodes.size() - 1});
            return this;
        }

        /** The address a node's tensor has: the ids tensor of a later MUL_MAT_ID. */
        long lastTensor() {
            return nodes.getLast().tensor();
        }
    }

    /** One MoE layer as llama.cpp builds it: norm (fused with its MUL), router, top-k view, gate/up/down experts. */
    private static void moeLayer(Graph g, int layer) {
        g.node(RMS_NORM, COMPUTE, 0, "norm-" + layer).node(MUL, COMPUTE, 0, "ffn_norm-" + layer).fuseLastTwo();
        g.node(MUL_MAT, COMPUTE, 0, "ffn_moe_logits-" + layer);
        g.node(ARGSORT, COMPUTE, 0, "ffn_moe_argsort-" + layer);
        g.node(VIEW, COMPUTE, 0, "ffn_moe_topk-" + layer + " (view)");
        long ids = g.lastTensor();
        g.node(GET_ROWS, COMPUTE, 0, "ffn_moe_weights-" + layer);
        g.node(MUL_MAT_ID, COMPUTE, ids, "ffn_moe_gate-" + layer);
        g.node(MUL_MAT_ID, COMPUTE, ids, "ffn_moe_up-" + layer);
        g.node(GLU, COMPUTE, 0, "ffn_moe_swiglu-" + layer);
        g.node(MUL_MAT_ID, COMPUTE, ids, "ffn_moe_down-" + layer);
        g.node(ADD, COMPUTE, 0, "ffn_out-" + layer);
    }

    @Test
    void aLlamaStyleMoeGraphIsPlannedAlikeAndReadWhereUserSpaceLooks() throws Exception {
        Graph g = new Graph();
        g.node(GET_ROWS, 0, 0, "inp_embd"); // an input: no COMPUTE flag, the loop skips it
        for (int layer = 0; layer < 3; layer++) {
            moeLayer(g, layer);
        }
        g.node(RMS_NORM, COMPUTE, 0, "norm").node(MUL, COMPUTE, 0, "result_norm").fuseLastTwo();
        g.node(MUL_MAT, COMPUTE, 0, "result_output");
        Result r = compare(g, COMPUTE, false);
        assertEquals(3, r.javaPlans.size(), "one plan per layer: " + r.javaPlans);
        assertEquals("4 0", r.javaReads.getFirst(), "the input and the view are no groups, the fused norm one: the gate is 4");
    }

    @Test
    void aDenseGraphHasNoPlanOnEitherSide() throws Exception {
        Graph g = new Graph();
        for (int layer = 0; layer < 2; layer++) {
            g.node(RMS_NORM, COMPUTE, 0, "norm-" + layer).node(MUL, COMPUTE, 0, "attn_norm-" + layer).fuseLastTwo();
            g.node(MUL_MAT, COMPUTE, 0, "ffn_up-" + layer).node(GLU, COMPUTE, 0, "ffn_swiglu-" + layer);
            g.node(MUL_MAT, COMPUTE, 0, "ffn_down-" + layer);
        }
        assertTrue(compare(g, COMPUTE, false).javaPlans.isEmpty());
    }

    @Test
    void layersFromNamesAgreeWhateverTheTargetNamedItsTensors() throws Exception {
        // The target chooses its names: no number, a suffix, six digits, leading zeros, digits that are not
        // ASCII, 64 bytes with no NUL, an unreadable name (both fall back to the plan's index).
        String[] names = {"ffn_moe_gate", "ffn_moe_gate-4 (copy)", "ffn_moe_gate-123456", "ffn_moe_gate-0000012",
                "ffn_moe_gate-1234567", "ffn_moe_gate-\u0663", "gate-", "a-1-2", "-7", "ffn_moe_gate-99999"};
        Graph g = new Graph();
        for (String name : names) {
            g.node(ARGSORT, COMPUTE, 0, "argsort");
            long ids = g.lastTensor();
            g.node(MUL_MAT_ID, COMPUTE, ids, name);
        }
        byte[] full = new byte[64];
        java.util.Arrays.fill(full, (byte) '1');
        full[10] = '-';
        for (byte[] name : new byte[][] {full, null}) {
            g.node(ARGSORT, COMPUTE, 0, "argsort");
            long ids = g.lastTensor();
            g.node(MUL_MAT_ID, COMPUTE, ids, name);
        }
        Result r = compare(g, COMPUTE, false);
        assertEquals(names.length + 2, r.javaPlans.size());
    }

    @Test
    void mulMatIdsWithoutIdsOrNotComputedAreNotPlanned() throws Exception {
        Graph g = new Graph();
        g.node(ARGSORT, COMPUTE, 0, "ffn_moe_argsort-0");
        long ids = g.lastTensor();
        g.node(MUL_MAT_ID, COMPUTE, 0, "ffn_moe_gate-0"); // no src[2]
        g.node(MUL_MAT_ID, 0, ids, "ffn_moe_up-0");      // not computed: the loop skips it
        g.node(MUL_MAT_ID, COMPUTE, ids, "ffn_moe_down-0");
        Result r = compare(g, COMPUTE, false);
        assertEquals(List.of("2 0"), r.javaReads, "the down projection, group 2, is the layer's first read");
    }

    @Test
    void anIdsTensorMetAgainAfterAnotherIsPlannedAgain() throws Exception {
        // BPF's walk remembers the ids planned last, not every one: user space plans by the same rule.
        Graph g = new Graph();
        g.node(ARGSORT, COMPUTE, 0, "ffn_moe_argsort-0");
        long first = g.lastTensor();
        g.node(ARGSORT, COMPUTE, 0, "ffn_moe_argsort-1");
        long second = g.lastTensor();
        g.node(MUL_MAT_ID, COMPUTE, first, "ffn_moe_gate-0");
        g.node(MUL_MAT_ID, COMPUTE, second, "ffn_moe_gate-1");
        g.node(MUL_MAT_ID, COMPUTE, first, "ffn_moe_up-0");
        assertEquals(3, compare(g, COMPUTE, false).javaPlans.size());
    }

    @Test
    void aMulMatIdThatEndsAFusedGroupIsKeyedAsItsThreadsNumberIt() throws Exception {
        // A fused call covering [ADD, MUL_MAT_ID]: the threads' arrival after it plus their fused calls so far
        // is the MUL_MAT_ID's own executed index, not its group's first node's.
        Graph g = new Graph();
        g.node(RMS_NORM, COMPUTE, 0, "norm-0").node(MUL, COMPUTE, 0, "ffn_norm-0").fuseLastTwo();
        g.node(ARGSORT, COMPUTE, 0, "ffn_moe_argsort-0");
        long ids = g.lastTensor();
        g.node(ADD, COMPUTE, 0, "bias-0").node(MUL_MAT_ID, COMPUTE, ids, "ffn_moe_gate-0").fuseLastTwo();
        g.node(MUL_MAT_ID, COMPUTE, ids, "ffn_moe_up-0");
        Result r = compare(g, COMPUTE, false);
        assertEquals(List.of("4 " + Long.toHexString(ids) + " 0"), r.javaPlans);
    }

    @Test
    void groupsPastWhatBpfNumbersArePlannedOnNeitherSide() throws Exception {
        // Fused pairs put the MUL_MAT_ID's arrival index under MOE_PLAN_GROUPS and its executed index past it.
        Graph g = new Graph();
        int pairs = EventLayout.MOE_PLAN_GROUPS / 2 - 2;
        for (int i = 0; i < pairs; i++) {
            g.node(RMS_NORM, COMPUTE, 0, "norm").node(MUL, COMPUTE, 0, "norm_mul").fuseLastTwo();
        }
        g.node(ARGSORT, COMPUTE, 0, "ffn_moe_argsort-0");
        long low = g.lastTensor();
        g.node(MUL_MAT_ID, COMPUTE, low, "ffn_moe_gate-0"); // executed index 4093: planned
        g.node(MUL, COMPUTE, 0, "mul");
        g.node(ARGSORT, COMPUTE, 0, "ffn_moe_argsort-1");
        long high = g.lastTensor();
        g.node(MUL_MAT_ID, COMPUTE, high, "ffn_moe_gate-1"); // executed index 4096 (the first past), arrival 2050
        Result r = compare(g, COMPUTE, false);
        assertEquals(List.of((EventLayout.MOE_PLAN_GROUPS - 3) + " " + Long.toHexString(low) + " 0"), r.javaPlans);
    }

    @Test
    void anOlderLoopIsPlannedInUserSpaceAndReadWhereItLooks() throws Exception {
        // Before the COMPUTE flag: BPF does not plan; every node, empty or not, is a group of its own.
        Graph g = new Graph();
        for (int layer = 0; layer < 2; layer++) {
            moeLayer(g, layer);
        }
        for (int i = 0; i < g.nodes.size(); i++) {
            Node n = g.nodes.get(i);
            g.nodes.set(i, new Node(n.tensor(), n.op(), 0, n.ids(), n.name()));
        }
        g.fused.clear();
        Result r = compare(g, 0, true);
        assertEquals(List.of("6 0", "17 1"), r.javaReads, "each layer's gate, node 6 of its 11");
    }

    @Test
    void aLoopWithoutTheComputeFlagThatSkipsEmptyNodesIsReadWhereItLooks() throws Exception {
        Graph g = new Graph();
        for (int layer = 0; layer < 2; layer++) {
            moeLayer(g, layer);
        }
        Result r = compare(g, 0, false);
        assertEquals(2, r.javaPlans.size());
    }

    /** What each side made of a graph, as lines: plans "GROUP IDS LAYER", reads "ARRIVAL LAYER". */
    private record Result(List<String> javaPlans, List<String> javaReads) {}

    /**
     * Runs both planners on {@code g} and asserts they agree: where BPF plans (a COMPUTE flag), its plan is user
     * space's; a thread's reads with either plan are at the arrivals user space expects.
     *
     * @param olderLoop every node is a group (arrivals once per node), as before the COMPUTE flag
     */
    private Result compare(Graph g, int computeFlag, boolean olderLoop) throws Exception {
        OpNaming naming = GraphFixture.naming(OPS, computeFlag, EMPTY_OPS);
        NameTable names = new NameTable();
        MoePlanner planner = new MoePlanner(naming, names);
        CpuGraphAssembler assembler = new CpuGraphAssembler(naming);
        MoePlanner.Plan[] plan = new MoePlanner.Plan[1];
        StringBuilder groupKinds = new StringBuilder();
        assembler.addListener(graph -> {
            plan[0] = planner.plan(graph);
            for (int k = 0; k < graph.groupCount(); k++) {
                groupKinds.append(graph.firstNode(k) == graph.lastNode(k) ? 'n' : 'f');
            }
            assertEquals(olderLoop, graph.everyNode());
            assertEquals(CpuGraph.Status.ATTRIBUTED, graph.status());
        });
        GraphFixture fixture = new GraphFixture(assembler);
        assembler.onGraphStart(1, 0);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bytes = arena.allocate(64);
            for (int i = 0; i < g.nodes.size(); i++) {
                Node n = g.nodes.get(i);
                bytes.fill((byte) 0);
                if (n.name() != null) {
                    MemorySegment.copy(MemorySegment.ofArray(n.name()), 0, bytes, 0, Math.min(64, n.name().length));
                }
                // An unreadable name reaches user space as "" (the walk's node record zeroes it).
                fixture.node(1, 0, i, n.tensor(), n.op(), n.flags(), 8, 1, 1, 1, 0, 0, n.ids(),
                        names.intern(bytes, 0, 64));
            }
        }
        int executed = 0;
        for (Node n : g.nodes) {
            executed += olderLoop || (!EMPTY_OPS.contains(n.op()) && (computeFlag == 0 || (n.flags() & computeFlag) != 0))
                    ? 1 : 0;
        }
        for (int[] f : g.fused) {
            fixture.fused(7, 1, 0, g.nodes.get(f[0]).tensor(), g.nodes.get(f[1]).tensor());
        }
        long[] arrivals = new long[executed - g.fused.size()];
        for (int k = 0; k < arrivals.length; k++) {
            arrivals[k] = 2000 + 100L * k;
        }
        fixture.arrivals(7, 1, 1000, arrivals);
        fixture.finish();
        assertNotNull(plan[0], "user space made no plan: its arrivals fit no grouping");

        List<String> javaPlans = new ArrayList<>();
        List<String> javaReads = new ArrayList<>();
        for (int i = 0; i < plan[0].copyGroups().length; i++) {
            javaPlans.add(plan[0].bpfGroups()[i] + " " + Long.toHexString(plan[0].idsTensors()[i]) + " "
                    + plan[0].layers()[i]);
            javaReads.add(plan[0].copyGroups()[i] + " " + plan[0].layers()[i]);
        }

        // BPF: walk the graph (plans where the COMPUTE flag is known), run a thread over it; then a graph of
        // another signature with user space's plan written, as MoePlans writes it, run by a thread too.
        long bpfSignature = 0xb0b0L;
        long userSignature = 0x5e5eL;
        StringBuilder script = new StringBuilder();
        long emptyOps = 0;
        for (int op : EMPTY_OPS) {
            emptyOps |= 1L << op;
        }
        script.append("config ").append(MUL_MAT_ID).append(' ').append(computeFlag).append(' ')
                .append(Long.toHexString(emptyOps)).append(" 0\n");
        script.append("graph 1 ").append(Long.toHexString(bpfSignature)).append('\n');
        for (Node n : g.nodes) {
            script.append("node ").append(Long.toHexString(n.tensor())).append(' ').append(n.op()).append(' ')
                    .append(n.flags()).append(' ').append(Long.toHexString(n.ids())).append(' ')
                    .append(n.name() == null ? "-" : HexFormat.of().formatHex(n.name())).append('\n');
        }
        script.append("mark bpf-plans\nplans ").append(Long.toHexString(bpfSignature)).append('\n');
        script.append("mark bpf-reads\nthread 7 ").append(groupKinds).append('\n');
        for (int i = 0; i < plan[0].copyGroups().length; i++) {
            script.append("write ").append(Long.toHexString(userSignature)).append(' ').append(plan[0].bpfGroups()[i])
                    .append(' ').append(Long.toHexString(plan[0].idsTensors()[i])).append(' ')
                    .append(plan[0].layers()[i]).append('\n');
        }
        script.append("graph 2 ").append(Long.toHexString(userSignature)).append('\n');
        script.append("mark user-reads\nthread 8 ").append(groupKinds).append('\n');

        List<String> bpfPlans = new ArrayList<>();
        List<String> bpfReads = new ArrayList<>();
        List<String> userReads = new ArrayList<>();
        List<String> section = null;
        for (String line : run(harness.getParent(), script.toString(), harness.toString()).split("\n")) {
            switch (line) {
                case "bpf-plans" -> section = bpfPlans;
                case "bpf-reads" -> section = bpfReads;
                case "user-reads" -> section = userReads;
                case "unplanned", "" -> { }
                default -> {
                    assertNotNull(section, line);
                    section.add(line.startsWith("plan ") ? line.substring(5)
                            : line.startsWith("read ") ? line.substring(5) : "?" + line);
                }
            }
        }
        if (computeFlag != 0) {
            assertEquals(javaPlans, bpfPlans, "BPF's plan (group key, ids tensor, layer) against user space's");
            assertEquals(javaReads, bpfReads, "reads with BPF's plan (arrival, layer) against where user space looks");
        } else {
            assertEquals(List.of(), bpfPlans, "BPF plans only loops that skip by the COMPUTE flag");
        }
        assertEquals(javaReads, userReads, "reads with user space's plan written to BPF against where it looks");
        return new Result(javaPlans, javaReads);
    }

    private static String run(Path dir, String input, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        if (input != null) {
            try (var in = process.getOutputStream()) {
                in.write(input.getBytes(StandardCharsets.UTF_8));
            }
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail(String.join(" ", command) + " did not finish");
        }
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
