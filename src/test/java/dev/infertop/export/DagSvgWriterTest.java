package dev.infertop.export;

import dev.infertop.model.GraphNode;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SVG drawn for synthetic llama-like decode graphs with known times, read back as XML: one block drawn per
 * block kind whatever the depth, times across layers, critical marks, the per-layer strip, hostile names, and
 * the unfolded and critical-path-only fallbacks.
 */
class DagSvgWriterTest {
    // Times of a dense block's nodes, in ns. K's chain (Kcur, Krope, the cache copy: 25 µs) is longer than Q's
    // (23 µs), so Kcur is on the critical path and Qcur never is; except in every fourth layer, where Vcur's 1 ms
    // beats the whole attention branch (40 µs) and Vcur is critical instead.
    static final long NORM = 2_000, ATTN_NORM = 1_000, QCUR = 20_000, KCUR = 20_000, V_FAST = 20_000, V_SLOW = 1_000_000,
            ROPE = 3_000, CPY = 2_000, KQ = 10_000, SOFT_MAX = 5_000, KQV = 10_000, CONT = 1_000, ATTN_OUT = 20_000,
            ADD = 1_000, FFN_NORM = 1_000, GATE = 50_000, UP = 40_000, GLU = 5_000;
    static final int DENSE_NODES = 22;
    static final int MOE_NODES = 25;
    static final int OUTSIDE_NODES = 4; // inp_embd; norm, result_norm, result_output

    /** ffn_out's time in layer {@code layer}: 100 µs + 10 µs a layer, so min, median and max are known. */
    static long ffnOutNs(int layer) {
        return 100_000 + 10_000L * layer;
    }

    static long vcurNs(int layer) {
        return layer % 4 == 0 ? V_SLOW : V_FAST;
    }

    /** Builds a graph the way ggml lists it: nodes in order, sources by name, unknown names are leaves. */
    static final class Graph {
        final List<GraphNode> nodes = new ArrayList<>();
        private final Map<String, Long> tensorOf = new HashMap<>();
        private long next = 0x10000;

        String add(String op, String name, long timeNs, String... sources) {
            List<Long> addresses = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (String source : sources) {
                addresses.add(tensorOf.computeIfAbsent(source, s -> next += 0x100));
                names.add(source);
            }
            while (addresses.size() < 3) {
                addresses.add(0L);
                names.add("");
            }
            long tensor = next += 0x100;
            tensorOf.put(name, tensor);
            nodes.add(new GraphNode(nodes.size(), tensor, op, name, List.of(4096L, 1L, 1L, 1L), addresses, timeNs,
                    !op.equals("VIEW"), names));
            return name;
        }
    }

    /** inp_embd, {@code layers} blocks (odd ones MoE when {@code alternating}), then norm, result_norm, result_output. */
    static List<GraphNode> llama(int layers, boolean alternating) {
        Graph g = new Graph();
        String in = g.add("GET_ROWS", "inp_embd", 4_000, "token_embd.weight", "inp_tokens");
        for (int l = 0; l < layers; l++) {
            String blk = "blk." + l + ".";
            String norm = g.add("RMS_NORM", "norm-" + l, NORM, in);
            String attnNorm = g.add("MUL", "attn_norm-" + l, ATTN_NORM, norm, blk + "attn_norm.weight");
            String q = g.add("MUL_MAT", "Qcur-" + l, QCUR, blk + "attn_q.weight", attnNorm);
            String k = g.add("MUL_MAT", "Kcur-" + l, KCUR, blk + "attn_k.weight", attnNorm);
            String v = g.add("MUL_MAT", "Vcur-" + l, vcurNs(l), blk + "attn_v.weight", attnNorm);
            String qRope = g.add("ROPE", "Qrope-" + l, ROPE, q, "inp_pos");
            String kRope = g.add("ROPE", "Krope-" + l, ROPE, k, "inp_pos");
            String cacheView = g.add("VIEW", "cache_k_l" + l + " (view)", 0, "cache_k_l" + l);
            String kCopy = g.add("CPY", "k_cache_view-" + l + " (copy of Krope-" + l + ")", CPY, kRope, cacheView);
            String kq = g.add("MUL_MAT", "kq-" + l, KQ, kCopy, qRope);
            String softMax = g.add("SOFT_MAX", "kq_soft_max-" + l, SOFT_MAX, kq, "KQ_mask");
            String kqv = g.add("MUL_MAT", "kqv-" + l, KQV, v, softMax);
            String cont = g.add("CONT", "node_" + g.nodes.size(), CONT, kqv); // ggml's name for an unnamed tensor
            String attnOut = g.add("MUL_MAT", "attn_out-" + l, ATTN_OUT, blk + "attn_output.weight", cont);
            String ffnInp = g.add("ADD", "ffn_inp-" + l, ADD, attnOut, in);
            String norm2 = g.add("RMS_NORM", "norm_ffn-" + l, NORM, ffnInp);
            String ffnNorm = g.add("MUL", "ffn_norm-" + l, FFN_NORM, norm2, blk + "ffn_norm.weight");
            String ffnOut;
            if (alternating && l % 2 == 1) {
                String logits = g.add("MUL_MAT", "ffn_moe_logits-" + l, GATE, blk + "ffn_gate_inp.weight", ffnNorm);
                String probs = g.add("SOFT_MAX", "ffn_moe_probs-" + l, SOFT_MAX, logits);
                String topk = g.add("ARGSORT", "ffn_moe_topk-" + l, SOFT_MAX, probs);
                String gate = g.add("MUL_MAT_ID", "ffn_moe_gate-" + l, GATE, blk + "ffn_gate_exps.weight", ffnNorm, topk);
                String up = g.add("MUL_MAT_ID", "ffn_moe_up-" + l, UP, blk + "ffn_up_exps.weight", ffnNorm, topk);
                String glu = g.add("GLU", "ffn_moe_swiglu-" + l, GLU, gate, up);
                ffnOut = g.add("MUL_MAT_ID", "ffn_moe_down-" + l, ffnOutNs(l), blk + "ffn_down_exps.weight", glu, topk);
            } else {
                String gate = g.add("MUL_MAT", "ffn_gate-" + l, GATE, blk + "ffn_gate.weight", ffnNorm);
                String up = g.add("MUL_MAT", "ffn_up-" + l, UP, blk + "ffn_up.weight", ffnNorm);
                String glu = g.add("GLU", "ffn_swiglu-" + l, GLU, gate, up);
                ffnOut = g.add("MUL_MAT", "ffn_out-" + l, ffnOutNs(l), blk + "ffn_down.weight", glu);
            }
            in = g.add("ADD", "l_out-" + l, ADD, ffnOut, ffnInp);
        }
        String norm = g.add("RMS_NORM", "norm", NORM, in);
        String resultNorm = g.add("MUL", "result_norm", ATTN_NORM, norm, "output_norm.weight");
        g.add("MUL_MAT", "result_output", 300_000, "output.weight", resultNorm);
        return g.nodes;
    }

    static Document parse(String svg) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        Document doc = factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertEquals("http://www.w3.org/2000/svg", doc.getDocumentElement().getNamespaceURI());
        assertEquals("svg", doc.getDocumentElement().getLocalName());
        return doc;
    }

    static List<Element> with(Document doc, String attribute) throws Exception {
        NodeList found = (NodeList) XPathFactory.newInstance().newXPath()
                .evaluate("//*[@" + attribute + "]", doc, XPathConstants.NODESET);
        List<Element> elements = new ArrayList<>();
        for (int i = 0; i < found.getLength(); i++) {
            elements.add((Element) found.item(i));
        }
        return elements;
    }

    /** A box's or row's text lines. */
    static List<String> lines(Element g) {
        NodeList texts = g.getElementsByTagNameNS("http://www.w3.org/2000/svg", "text");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < texts.getLength(); i++) {
            lines.add(texts.item(i).getTextContent());
        }
        return lines;
    }

    /** The node box whose name line (the second) is {@code name}. */
    static Element box(Document doc, String name) throws Exception {
        return with(doc, "data-node").stream().filter(g -> lines(g).get(1).equals(name)).findFirst().orElseThrow();
    }

    static String stroke(Element box) {
        return ((Element) box.getElementsByTagNameNS("http://www.w3.org/2000/svg", "rect").item(0)).getAttribute("stroke");
    }

    @Test
    void aDenseModelDrawsOneBlockWithTimesAcrossItsLayers() throws Exception {
        OperatorDag dag = OperatorDag.of(llama(16, false));
        String svg = DagSvgWriter.svg(dag);
        Document doc = parse(svg);

        assertEquals(OUTSIDE_NODES + DENSE_NODES, with(doc, "data-node").size());
        assertEquals(DENSE_NODES, with(doc, "data-median-ns").size(), "one detailed block");
        assertTrue(svg.contains("folded: 16 layers into 1 block kind (A: 16)"), svg.substring(0, 800));

        Element ffnOut = box(doc, "ffn_out-N");
        assertEquals("175000", ffnOut.getAttribute("data-median-ns")); // (170 + 180 µs) / 2
        assertEquals("100000", ffnOut.getAttribute("data-min-ns"));
        assertEquals("250000", ffnOut.getAttribute("data-max-ns"));
        assertTrue(lines(ffnOut).contains("median 175.0 µs"), lines(ffnOut).toString());
        assertTrue(lines(ffnOut).contains("min 100.0 µs max 250.0 µs"), lines(ffnOut).toString());

        Element vcur = box(doc, "Vcur-N");
        assertEquals("4/16", vcur.getAttribute("data-critical-layers"));
        assertTrue(lines(vcur).contains("critical in 4/16 layers"));
        assertEquals(DagSection.RED, stroke(vcur));
        assertEquals("20000", vcur.getAttribute("data-median-ns"));
        assertEquals("1000000", vcur.getAttribute("data-max-ns"));
        Element kcur = box(doc, "Kcur-N");
        assertTrue(lines(kcur).contains("critical in 12/16 layers"));
        assertEquals(DagSection.RED, stroke(kcur));
        Element qcur = box(doc, "Qcur-N");
        assertEquals("0/16", qcur.getAttribute("data-critical-layers"));
        assertTrue(lines(qcur).stream().noneMatch(line -> line.startsWith("critical")), lines(qcur).toString());
        assertEquals("#333333", stroke(qcur));
        assertTrue(lines(box(doc, "l_out-N")).contains("critical in 16/16 layers"));
        // Names with other digits fold too: ggml's node_17 and the KV-cache view.
        box(doc, "cache_k_lN (view)");
        box(doc, "k_cache_view-N (copy of Krope-N)");

        // Leaves of the drawn block only, a layer's number written N.
        List<String> leaves = with(doc, "data-leaf").stream().map(e -> lines(e).getFirst()).toList();
        assertTrue(leaves.contains("blk.N.attn_q.weight"), leaves.toString());
        assertTrue(leaves.contains("cache_k_lN"), leaves.toString());
        assertTrue(leaves.contains("output.weight"), leaves.toString());
        assertFalse(leaves.contains("blk.1.attn_q.weight"), leaves.toString());
        // The prologue and epilogue keep their own times.
        assertEquals("300000", box(doc, "result_output").getAttribute("data-time-ns"));
        assertTrue(lines(box(doc, "result_output")).contains("300.0 µs"));
    }

    @Test
    void theStripHasOneRowPerLayerWithItsTotalAndCriticalTime() throws Exception {
        Document doc = parse(DagSvgWriter.svg(OperatorDag.of(llama(16, false))));
        List<Element> rows = with(doc, "data-layer");
        assertEquals(16, rows.size());
        for (int l = 0; l < 16; l++) {
            assertEquals(String.valueOf(l), rows.get(l).getAttribute("data-layer"));
            assertEquals("A", rows.get(l).getAttribute("data-kind"));
        }
        long common = NORM + ATTN_NORM + KCUR + QCUR + ROPE + ROPE + CPY + KQ + SOFT_MAX + KQV + CONT + ATTN_OUT + ADD
                + NORM + FFN_NORM + GATE + UP + GLU + ADD;
        Element layer4 = rows.get(4);
        assertEquals(String.valueOf(common + V_SLOW + ffnOutNs(4)), layer4.getAttribute("data-total-ns"));
        // Layer 4's path: norm, attn_norm, Vcur, kqv, cont, attn_out, ffn_inp, norm_ffn, ffn_norm, gate, glu, out, l_out.
        long critical4 = NORM + ATTN_NORM + V_SLOW + KQV + CONT + ATTN_OUT + ADD + NORM + FFN_NORM + GATE + GLU
                + ffnOutNs(4) + ADD;
        assertEquals(String.valueOf(critical4), layer4.getAttribute("data-critical-ns"));
        assertEquals(List.of("4", "A", "1.337 ms", "1.234 ms"), lines(layer4));
    }

    @Test
    void alternatingLayersMakeTwoBlockKinds() throws Exception {
        Document doc = parse(DagSvgWriter.svg(OperatorDag.of(llama(16, true))));
        assertEquals(DENSE_NODES + MOE_NODES, with(doc, "data-median-ns").size());
        assertEquals(OUTSIDE_NODES + DENSE_NODES + MOE_NODES, with(doc, "data-node").size());
        List<Element> rows = with(doc, "data-layer");
        assertEquals(16, rows.size());
        assertEquals("A", rows.get(0).getAttribute("data-kind"));
        assertEquals("B", rows.get(1).getAttribute("data-kind"));
        assertEquals("B", rows.get(15).getAttribute("data-kind"));
        Element down = box(doc, "ffn_moe_down-N"); // layers 1, 3, ... 15
        assertEquals("110000", down.getAttribute("data-min-ns"));
        assertEquals("250000", down.getAttribute("data-max-ns"));
        assertEquals("180000", down.getAttribute("data-median-ns")); // (170 + 190 µs) / 2
        assertEquals("8/8", down.getAttribute("data-critical-layers"));
    }

    @Test
    void deeperModelsGrowOnlyByTheStrip() throws Exception {
        String svg16 = DagSvgWriter.svg(OperatorDag.of(llama(16, false)));
        String svg32 = DagSvgWriter.svg(OperatorDag.of(llama(32, false)));
        long start = System.nanoTime();
        OperatorDag dag80 = OperatorDag.of(llama(80, false));
        String svg80 = DagSvgWriter.svg(dag80);
        System.out.printf("DagSvgWriter: 80 layers, %d nodes, %d leaves: %.1f ms, %d bytes%n", dag80.nodes().size(),
                dag80.leaves().size(), (System.nanoTime() - start) / 1e6, svg80.length());

        Document doc16 = parse(svg16);
        Document doc80 = parse(svg80);
        assertEquals(with(doc16, "data-node").size(), with(doc80, "data-node").size());
        assertEquals(with(doc16, "data-leaf").size(), with(doc80, "data-leaf").size());
        assertEquals(with(doc16, "data-node").size(), with(parse(svg32), "data-node").size());
        assertEquals(80, with(doc80, "data-layer").size());
        assertTrue(lines(box(doc80, "Vcur-N")).contains("critical in 20/80 layers"));
        int rest16 = withoutStrip(svg16).length();
        int rest80 = withoutStrip(svg80).length();
        assertTrue(Math.abs(rest80 - rest16) < 300, rest16 + " bytes besides the strip at 16 layers, " + rest80 + " at 80");
        assertTrue(svg80.length() - svg16.length() > 64 * 200, "64 more strip rows");
    }

    private static String withoutStrip(String svg) {
        return svg.replaceAll("<g data-layer=[^\n]*\n", "");
    }

    @Test
    void sameGraphSameBytes() {
        assertEquals(DagSvgWriter.svg(OperatorDag.of(llama(8, true))), DagSvgWriter.svg(OperatorDag.of(llama(8, true))));
    }

    @Test
    void hostileNamesAreShownNotObeyed() throws Exception {
        String hostile = "\u001b\u0007<script>x</script>&\"'\u0085\u009b\u007f\u202e\ud800\ufffe";
        Graph g = new Graph();
        String a = g.add("MUL_MAT", hostile, 10, "blk.0.\u001b.weight");
        g.add("ADD", "x".repeat(200), 5, a);
        String svg = DagSvgWriter.svg(OperatorDag.of(g.nodes));
        Document doc = parse(svg);

        assertFalse(svg.contains("<script"));
        assertEquals(0, doc.getElementsByTagNameNS("*", "script").getLength());
        svg.chars().forEach(c -> assertFalse(c < 0x20 && c != '\n' || c >= 0x7f && c <= 0x9f || c == 0x202e
                || Character.isSurrogate((char) c) || c == 0xfffe, "raw U+" + Integer.toHexString(c)));
        assertEquals("\\x1b\\x07<script>x</script>&\"'\\x85\\x9b\\x7f\\u202e\\ud800\\ufffe",
                lines(with(doc, "data-node").get(0)).get(1));
        String longName = lines(with(doc, "data-node").get(1)).get(1);
        assertEquals(DagSvgText.NAME_MAX_CHARS, longName.length());
        assertEquals("x".repeat(63) + "…", longName);
    }

    @Test
    void namesWithoutLayerNumbersAreDrawnUnfolded() throws Exception {
        Graph g = new Graph();
        String previous = g.add("GET_ROWS", "embd", 4, "tokens");
        for (int i = 0; i < 100; i++) {
            String left = g.add("MUL_MAT", "left_" + i, 3, "w_left", previous);
            String right = g.add("MUL_MAT", "right_" + i, 2, "w_right", previous);
            previous = g.add("ADD", "sum_" + i, 1, left, right);
        }
        OperatorDag dag = OperatorDag.of(g.nodes);
        String svg = DagSvgWriter.svg(dag);
        Document doc = parse(svg);
        assertEquals(301, with(doc, "data-node").size());
        assertEquals(0, with(doc, "data-layer").size());
        assertTrue(svg.contains("not folded: no node name carries a layer number"));
        assertEquals(DagSection.RED, stroke(box(doc, "left_7")));
        assertEquals("#333333", stroke(box(doc, "right_7")));

        String empty = DagSvgWriter.svg(OperatorDag.of(List.of()));
        assertEquals(0, with(parse(empty), "data-node").size());
        assertTrue(empty.contains("infertop operator DAG: 0 nodes, 0.000 ms measured"), empty);
    }

    @Test
    void beyondTheLimitOnlyTheCriticalPathIsDrawn() throws Exception {
        // Two interleaved chains: the even one is slower, so it is the critical path (2250 of 4500 nodes).
        Graph g = new Graph();
        for (int i = 0; i < 4500; i++) {
            String name = "t_" + i;
            if (i < 2) {
                g.add("ADD", name, i % 2 == 0 ? 10 : 1, "input");
            } else {
                g.add("ADD", name, i % 2 == 0 ? 10 : 1, "t_" + (i - 2));
            }
        }
        OperatorDag dag = OperatorDag.of(g.nodes);
        assertEquals(2250, dag.criticalPath().size());
        String svg = DagSvgWriter.svg(dag);
        Document doc = parse(svg);
        assertEquals(2250, with(doc, "data-node").size());
        assertTrue(svg.contains("2250 of 4500 nodes left out (over 4000 to draw): only the critical path is drawn"));
        assertTrue(with(doc, "data-node").stream().allMatch(box -> DagSection.RED.equals(stroke(box))));
    }

    @Test
    void layerNumbersAndGenericNames() {
        assertEquals(3, DagFolding.layerNumber("Qcur-3"));
        assertEquals(3, DagFolding.layerNumber("Kcur-3 (view)"));
        assertEquals(12, DagFolding.layerNumber("k_cache_view-12 (copy of Kcur-12)"));
        assertEquals(-1, DagFolding.layerNumber("cache_k_l3 (view)"));
        assertEquals(-1, DagFolding.layerNumber("node_17"));
        assertEquals(-1, DagFolding.layerNumber("inp_embd"));
        assertEquals("blk.N.attn_q.weight", DagFolding.generic("blk.1.attn_q.weight", 1));
        assertEquals("conv1d-N", DagFolding.generic("conv1d-1", 1));
        assertEquals("blk.11.x", DagFolding.generic("blk.11.x", 1));
        assertEquals("cache_k_lN (view)", DagFolding.generic("cache_k_l1 (view)", 1));
        assertEquals("0–3, 5, 7, 9, 10", DagSvgText.runs(List.of(0, 1, 2, 3, 5, 7, 9, 10), 80));
        assertEquals("0, 1", DagSvgText.runs(List.of(0, 1), 80));
    }
}
