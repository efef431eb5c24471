/**
 * The CPU graph of each compute, assembled once from the operator layer's records
 * ({@link dev.infertop.agg.graph.CpuGraphAssembler} to {@link dev.infertop.agg.graph.CpuGraph}: nodes, node
 * groups, each thread's barrier arrivals) and handed to every layer that reads it through
 * {@link dev.infertop.agg.graph.CpuGraphListener}.
 * <p>
 * May import: {@code event} (the records' payload views), {@code model}.
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.agg.graph;
