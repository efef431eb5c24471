package dev.infertop.event;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Compiles native/events.h with the host C compiler and checks every offset Java relies on. */
class EventLayoutTest {
    @Test
    void javaOffsetsMatchTheCHeader() throws Exception {
        Path dir = Files.createTempDirectory("infertop-layout");
        Path source = dir.resolve("layout.c");
        Files.writeString(source, """
                #include <stddef.h>
                #include <stdio.h>
                #include "events.h"
                #define P(s, f) printf(#s "." #f " %zu\\n", offsetof(struct s, f))
                #define S(s) printf(#s " %zu\\n", sizeof(struct s))
                int main(void) {
                    printf("EVENT_DECODE %d\\nEVENT_GRAPH %d\\nEVENT_CPU_GRAPH %d\\n", EVENT_DECODE, EVENT_GRAPH, EVENT_CPU_GRAPH);
                    P(event_header, kind); P(event_header, tid); P(event_header, start_ns); P(event_header, end_ns); S(event_header);
                    P(decode_event, ctx); P(decode_event, n_tokens); P(decode_event, ret); S(decode_event);
                    P(graph_event, backend); P(graph_event, guid); P(graph_event, n_nodes); P(graph_event, ret); S(graph_event);
                    P(cpu_graph_event, cgraph); P(cpu_graph_event, n_nodes); P(cpu_graph_event, ret); S(cpu_graph_event);
                    printf("EVENT_NODE %d\\nEVENT_ARRIVALS %d\\nEVENT_FUSED %d\\nNODE_NAME_BYTES %d\\nMAX_ARRIVALS %d\\n", EVENT_NODE, EVENT_ARRIVALS, EVENT_FUSED, NODE_NAME_BYTES, MAX_ARRIVALS);
                    P(arrivals_event, graph_seq); P(arrivals_event, count); P(arrivals_event, cpu_first); P(arrivals_event, cpu_last); P(arrivals_event, migrated); P(arrivals_event, ts);
                    P(node_event, graph_seq); P(node_event, tensor); P(node_event, src); P(node_event, ne); P(node_event, index);
                    P(node_event, n_nodes); P(node_event, op); P(node_event, type); P(node_event, flags); P(node_event, op_param0);
                    P(node_event, name); S(node_event);
                    P(thread_event, graph_seq); P(thread_event, cpu); P(thread_event, seq); P(thread_event, tensor); P(thread_event, tensor2); S(thread_event);
                    P(probe_config, target_tgid); P(probe_config, cgraph_n_nodes_offset); P(probe_config, cgraph_nodes_offset);
                    P(probe_config, tensor_type_offset); P(probe_config, tensor_ne_offset); P(probe_config, tensor_op_offset);
                    P(probe_config, tensor_op_params_offset); P(probe_config, tensor_flags_offset); P(probe_config, tensor_src_offset);
                    P(probe_config, tensor_name_offset); P(probe_config, max_graph_nodes); P(probe_config, graph_refresh); S(probe_config);
                    printf("EVENT_GRAPH_SAME %d\\n", EVENT_GRAPH_SAME);
                    P(op_control, enabled); P(op_control, every); P(op_control, filter_threads); S(op_control);
                    printf("EVENT_SCHED_OFF %d\\nEVENT_SCHED_CULPRIT %d\\nSCHED_COMM_BYTES %d\\n", EVENT_SCHED_OFF, EVENT_SCHED_CULPRIT, SCHED_COMM_BYTES);
                    P(sched_off_event, wake_ns); P(sched_off_event, ran_ns); P(sched_off_event, cpu_out); P(sched_off_event, cpu_in);
                    P(sched_off_event, preempted); S(sched_off_event);
                    P(sched_culprit_event, ns); P(sched_culprit_event, pid); P(sched_culprit_event, tgid); P(sched_culprit_event, cpu);
                    P(sched_culprit_event, comm); S(sched_culprit_event);
                    printf("EVENT_COUNTERS %d\\nMAX_COUNTER_EVENTS %d\\nMAX_COUNTER_GROUPS %d\\nMAX_COUNTER_CPUS %d\\n", EVENT_COUNTERS, MAX_COUNTER_EVENTS, MAX_COUNTER_GROUPS, MAX_COUNTER_CPUS);
                    P(counters_event, graph_seq); P(counters_event, count); P(counters_event, n_events); P(counters_event, migrated);
                    P(counters_event, failed); P(counters_event, enabled); P(counters_event, running); P(counters_event, migrated_bits);
                    P(counters_event, switched); P(counters_event, switched_bits); P(counters_event, delta); S(counters_event);
                    P(counter_control, enabled); P(counter_control, n_events); S(counter_control);
                    P(probe_config, tensor_data_offset); P(probe_config, tensor_nb_offset);
                    P(probe_config, op_mul_mat_id); P(probe_config, compute_flag); P(probe_config, empty_ops);
                    printf("EVENT_MOE %d\\nMOE_GRAPH %d\\nMOE_IDS %d\\nMOE_MAX_ID_BYTES %d\\nMOE_PLAN_GROUPS %d\\n", EVENT_MOE, MOE_GRAPH, MOE_IDS, MOE_MAX_ID_BYTES, MOE_PLAN_GROUPS);
                    P(moe_event, graph_seq); P(moe_event, signature); P(moe_event, subtype); P(moe_event, group); P(moe_event, value);
                    P(moe_event, layer); P(moe_event, ne0); P(moe_event, ne1); P(moe_event, nb1); P(moe_event, failed); P(moe_event, ids);
                    P(moe_control, enabled); S(moe_control); P(moe_plan_key, signature); P(moe_plan_key, group); S(moe_plan_key);
                    P(moe_plan, ids_tensor); P(moe_plan, copied_seq); P(moe_plan, layer); S(moe_plan); S(moe_group_bits);
                    printf("EVENT_BATCH %d\\nMAX_BATCH_TOKENS %d\\n", EVENT_BATCH, MAX_BATCH_TOKENS);
                    P(batch_event, ctx); P(batch_event, n_tokens); P(batch_event, recorded); P(batch_event, tokens); S(batch_event);
                    P(batch_token, pos); P(batch_token, seq); P(batch_token, logits); P(batch_token, n_seq); S(batch_token);
                    P(probe_config, batch_pos_offset); P(probe_config, batch_n_seq_id_offset);
                    P(probe_config, batch_seq_id_offset); P(probe_config, batch_logits_offset);
                    printf("EVENT_SEQ_RM %d\\n", EVENT_SEQ_RM);
                    P(seq_rm_event, memory); P(seq_rm_event, seq); P(seq_rm_event, p0); P(seq_rm_event, p1); S(seq_rm_event);
                    return 0;
                }
                """);
        Path binary = dir.resolve("layout");
        run(dir, "cc", "-I", Path.of("native").toAbsolutePath().toString(), "-o", binary.toString(), source.toString());
        Map<String, Long> c = new HashMap<>();
        for (String line : run(dir, binary.toString()).split("\n")) {
            String[] parts = line.split(" ");
            c.put(parts[0], Long.parseLong(parts[1]));
        }
        assertEquals(EventLayout.EVENT_DECODE, c.get("EVENT_DECODE"));
        assertEquals(EventLayout.EVENT_GRAPH, c.get("EVENT_GRAPH"));
        assertEquals(EventLayout.EVENT_CPU_GRAPH, c.get("EVENT_CPU_GRAPH"));
        assertEquals(EventLayout.HEADER_KIND, c.get("event_header.kind"));
        assertEquals(EventLayout.HEADER_TID, c.get("event_header.tid"));
        assertEquals(EventLayout.HEADER_START_NS, c.get("event_header.start_ns"));
        assertEquals(EventLayout.HEADER_END_NS, c.get("event_header.end_ns"));
        assertEquals(EventLayout.HEADER_SIZE, c.get("event_header"));
        assertEquals(EventLayout.DECODE_CTX, c.get("decode_event.ctx"));
        assertEquals(EventLayout.DECODE_N_TOKENS, c.get("decode_event.n_tokens"));
        assertEquals(EventLayout.DECODE_RET, c.get("decode_event.ret"));
        assertEquals(EventLayout.DECODE_SIZE, c.get("decode_event"));
        assertEquals(EventLayout.GRAPH_BACKEND, c.get("graph_event.backend"));
        assertEquals(EventLayout.GRAPH_GUID, c.get("graph_event.guid"));
        assertEquals(EventLayout.GRAPH_N_NODES, c.get("graph_event.n_nodes"));
        assertEquals(EventLayout.GRAPH_RET, c.get("graph_event.ret"));
        assertEquals(EventLayout.GRAPH_SIZE, c.get("graph_event"));
        assertEquals(EventLayout.CPU_GRAPH_CGRAPH, c.get("cpu_graph_event.cgraph"));
        assertEquals(EventLayout.CPU_GRAPH_N_NODES, c.get("cpu_graph_event.n_nodes"));
        assertEquals(EventLayout.CPU_GRAPH_RET, c.get("cpu_graph_event.ret"));
        assertEquals(EventLayout.CPU_GRAPH_SIZE, c.get("cpu_graph_event"));
        assertEquals(EventLayout.EVENT_NODE, c.get("EVENT_NODE"));
        assertEquals(EventLayout.EVENT_ARRIVALS, c.get("EVENT_ARRIVALS"));
        assertEquals(EventLayout.MAX_ARRIVALS, c.get("MAX_ARRIVALS"));
        assertEquals(EventLayout.ARRIVALS_GRAPH_SEQ, c.get("arrivals_event.graph_seq"));
        assertEquals(EventLayout.ARRIVALS_COUNT, c.get("arrivals_event.count"));
        assertEquals(EventLayout.ARRIVALS_CPU_FIRST, c.get("arrivals_event.cpu_first"));
        assertEquals(EventLayout.ARRIVALS_CPU_LAST, c.get("arrivals_event.cpu_last"));
        assertEquals(EventLayout.ARRIVALS_MIGRATED, c.get("arrivals_event.migrated"));
        assertEquals(EventLayout.ARRIVALS_TS, c.get("arrivals_event.ts"));
        assertEquals(EventLayout.EVENT_FUSED, c.get("EVENT_FUSED"));
        assertEquals(EventLayout.NODE_NAME_BYTES, c.get("NODE_NAME_BYTES"));
        assertEquals(EventLayout.NODE_GRAPH_SEQ, c.get("node_event.graph_seq"));
        assertEquals(EventLayout.NODE_TENSOR, c.get("node_event.tensor"));
        assertEquals(EventLayout.NODE_SRC, c.get("node_event.src"));
        assertEquals(EventLayout.NODE_NE, c.get("node_event.ne"));
        assertEquals(EventLayout.NODE_INDEX, c.get("node_event.index"));
        assertEquals(EventLayout.NODE_N_NODES, c.get("node_event.n_nodes"));
        assertEquals(EventLayout.NODE_OP, c.get("node_event.op"));
        assertEquals(EventLayout.NODE_TYPE, c.get("node_event.type"));
        assertEquals(EventLayout.NODE_FLAGS, c.get("node_event.flags"));
        assertEquals(EventLayout.NODE_OP_PARAM0, c.get("node_event.op_param0"));
        assertEquals(EventLayout.NODE_NAME, c.get("node_event.name"));
        assertEquals(EventLayout.NODE_SIZE, c.get("node_event"));
        assertEquals(EventLayout.THREAD_GRAPH_SEQ, c.get("thread_event.graph_seq"));
        assertEquals(EventLayout.THREAD_CPU, c.get("thread_event.cpu"));
        assertEquals(EventLayout.THREAD_SEQ, c.get("thread_event.seq"));
        assertEquals(EventLayout.THREAD_TENSOR, c.get("thread_event.tensor"));
        assertEquals(EventLayout.THREAD_TENSOR2, c.get("thread_event.tensor2"));
        assertEquals(EventLayout.THREAD_SIZE, c.get("thread_event"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TARGET_TGID, c.get("probe_config.target_tgid"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_CGRAPH_N_NODES_OFFSET, c.get("probe_config.cgraph_n_nodes_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_CGRAPH_NODES_OFFSET, c.get("probe_config.cgraph_nodes_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_TYPE_OFFSET, c.get("probe_config.tensor_type_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_NE_OFFSET, c.get("probe_config.tensor_ne_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_OP_OFFSET, c.get("probe_config.tensor_op_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_OP_PARAMS_OFFSET, c.get("probe_config.tensor_op_params_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_FLAGS_OFFSET, c.get("probe_config.tensor_flags_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_SRC_OFFSET, c.get("probe_config.tensor_src_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_NAME_OFFSET, c.get("probe_config.tensor_name_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_MAX_GRAPH_NODES, c.get("probe_config.max_graph_nodes"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_GRAPH_REFRESH, c.get("probe_config.graph_refresh"));
        assertEquals(EventLayout.EVENT_GRAPH_SAME, c.get("EVENT_GRAPH_SAME"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_SIZE, c.get("probe_config"));
        assertEquals(dev.infertop.bpf.ControlLayout.OP_CONTROL_ENABLED, c.get("op_control.enabled"));
        assertEquals(dev.infertop.bpf.ControlLayout.OP_CONTROL_EVERY, c.get("op_control.every"));
        assertEquals(dev.infertop.bpf.ControlLayout.OP_CONTROL_FILTER_THREADS, c.get("op_control.filter_threads"));
        assertEquals(EventLayout.EVENT_SCHED_OFF, c.get("EVENT_SCHED_OFF"));
        assertEquals(EventLayout.EVENT_SCHED_CULPRIT, c.get("EVENT_SCHED_CULPRIT"));
        assertEquals(EventLayout.SCHED_COMM_BYTES, c.get("SCHED_COMM_BYTES"));
        assertEquals(EventLayout.SCHED_OFF_WAKE_NS, c.get("sched_off_event.wake_ns"));
        assertEquals(EventLayout.SCHED_OFF_RAN_NS, c.get("sched_off_event.ran_ns"));
        assertEquals(EventLayout.SCHED_OFF_CPU_OUT, c.get("sched_off_event.cpu_out"));
        assertEquals(EventLayout.SCHED_OFF_CPU_IN, c.get("sched_off_event.cpu_in"));
        assertEquals(EventLayout.SCHED_OFF_PREEMPTED, c.get("sched_off_event.preempted"));
        assertEquals(EventLayout.SCHED_OFF_SIZE, c.get("sched_off_event"));
        assertEquals(EventLayout.SCHED_CULPRIT_NS, c.get("sched_culprit_event.ns"));
        assertEquals(EventLayout.SCHED_CULPRIT_PID, c.get("sched_culprit_event.pid"));
        assertEquals(EventLayout.SCHED_CULPRIT_TGID, c.get("sched_culprit_event.tgid"));
        assertEquals(EventLayout.SCHED_CULPRIT_CPU, c.get("sched_culprit_event.cpu"));
        assertEquals(EventLayout.SCHED_CULPRIT_COMM, c.get("sched_culprit_event.comm"));
        assertEquals(EventLayout.SCHED_CULPRIT_SIZE, c.get("sched_culprit_event"));
        assertEquals(dev.infertop.bpf.ControlLayout.OP_CONTROL_SIZE, c.get("op_control"));
        assertEquals(EventLayout.EVENT_COUNTERS, c.get("EVENT_COUNTERS"));
        assertEquals(dev.infertop.bpf.ControlLayout.MAX_COUNTER_EVENTS, c.get("MAX_COUNTER_EVENTS"));
        assertEquals(EventLayout.MAX_COUNTER_GROUPS, c.get("MAX_COUNTER_GROUPS"));
        assertEquals(dev.infertop.bpf.ControlLayout.MAX_COUNTER_CPUS, c.get("MAX_COUNTER_CPUS"));
        assertEquals(EventLayout.COUNTERS_GRAPH_SEQ, c.get("counters_event.graph_seq"));
        assertEquals(EventLayout.COUNTERS_COUNT, c.get("counters_event.count"));
        assertEquals(EventLayout.COUNTERS_N_EVENTS, c.get("counters_event.n_events"));
        assertEquals(EventLayout.COUNTERS_MIGRATED, c.get("counters_event.migrated"));
        assertEquals(EventLayout.COUNTERS_FAILED, c.get("counters_event.failed"));
        assertEquals(EventLayout.COUNTERS_ENABLED, c.get("counters_event.enabled"));
        assertEquals(EventLayout.COUNTERS_RUNNING, c.get("counters_event.running"));
        assertEquals(EventLayout.COUNTERS_MIGRATED_BITS, c.get("counters_event.migrated_bits"));
        assertEquals(EventLayout.COUNTERS_SWITCHED, c.get("counters_event.switched"));
        assertEquals(EventLayout.COUNTERS_SWITCHED_BITS, c.get("counters_event.switched_bits"));
        assertEquals(EventLayout.COUNTERS_DELTA, c.get("counters_event.delta"));
        assertEquals(EventLayout.COUNTERS_SIZE, c.get("counters_event"));
        assertEquals(dev.infertop.bpf.ControlLayout.COUNTER_CONTROL_ENABLED, c.get("counter_control.enabled"));
        assertEquals(dev.infertop.bpf.ControlLayout.COUNTER_CONTROL_N_EVENTS, c.get("counter_control.n_events"));
        assertEquals(dev.infertop.bpf.ControlLayout.COUNTER_CONTROL_SIZE, c.get("counter_control"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_DATA_OFFSET, c.get("probe_config.tensor_data_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_TENSOR_NB_OFFSET, c.get("probe_config.tensor_nb_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_OP_MUL_MAT_ID, c.get("probe_config.op_mul_mat_id"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_COMPUTE_FLAG, c.get("probe_config.compute_flag"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_EMPTY_OPS, c.get("probe_config.empty_ops"));
        assertEquals(EventLayout.EVENT_BATCH, c.get("EVENT_BATCH"));
        assertEquals(EventLayout.MAX_BATCH_TOKENS, c.get("MAX_BATCH_TOKENS"));
        assertEquals(EventLayout.BATCH_CTX, c.get("batch_event.ctx"));
        assertEquals(EventLayout.BATCH_N_TOKENS, c.get("batch_event.n_tokens"));
        assertEquals(EventLayout.BATCH_RECORDED, c.get("batch_event.recorded"));
        assertEquals(EventLayout.BATCH_TOKENS, c.get("batch_event.tokens"));
        assertEquals(EventLayout.BATCH_SIZE, c.get("batch_event"));
        assertEquals(EventLayout.BATCH_TOKEN_POS, c.get("batch_token.pos"));
        assertEquals(EventLayout.BATCH_TOKEN_SEQ, c.get("batch_token.seq"));
        assertEquals(EventLayout.BATCH_TOKEN_LOGITS, c.get("batch_token.logits"));
        assertEquals(EventLayout.BATCH_TOKEN_N_SEQ, c.get("batch_token.n_seq"));
        assertEquals(EventLayout.BATCH_TOKEN_SIZE, c.get("batch_token"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_BATCH_POS_OFFSET, c.get("probe_config.batch_pos_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_BATCH_N_SEQ_ID_OFFSET, c.get("probe_config.batch_n_seq_id_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_BATCH_SEQ_ID_OFFSET, c.get("probe_config.batch_seq_id_offset"));
        assertEquals(dev.infertop.bpf.ControlLayout.CONFIG_BATCH_LOGITS_OFFSET, c.get("probe_config.batch_logits_offset"));
        assertEquals(EventLayout.EVENT_SEQ_RM, c.get("EVENT_SEQ_RM"));
        assertEquals(EventLayout.SEQ_RM_MEMORY, c.get("seq_rm_event.memory"));
        assertEquals(EventLayout.SEQ_RM_SEQ, c.get("seq_rm_event.seq"));
        assertEquals(EventLayout.SEQ_RM_P0, c.get("seq_rm_event.p0"));
        assertEquals(EventLayout.SEQ_RM_P1, c.get("seq_rm_event.p1"));
        assertEquals(EventLayout.SEQ_RM_SIZE, c.get("seq_rm_event"));
        assertEquals(EventLayout.EVENT_MOE, c.get("EVENT_MOE"));
        assertEquals(EventLayout.MOE_GRAPH, c.get("MOE_GRAPH"));
        assertEquals(EventLayout.MOE_IDS, c.get("MOE_IDS"));
        assertEquals(EventLayout.MOE_MAX_ID_BYTES, c.get("MOE_MAX_ID_BYTES"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_GROUPS, c.get("MOE_PLAN_GROUPS"));
        assertEquals(EventLayout.MOE_GRAPH_SEQ, c.get("moe_event.graph_seq"));
        assertEquals(EventLayout.MOE_SIGNATURE, c.get("moe_event.signature"));
        assertEquals(EventLayout.MOE_SUBTYPE, c.get("moe_event.subtype"));
        assertEquals(EventLayout.MOE_GROUP, c.get("moe_event.group"));
        assertEquals(EventLayout.MOE_VALUE, c.get("moe_event.value"));
        assertEquals(EventLayout.MOE_LAYER, c.get("moe_event.layer"));
        assertEquals(EventLayout.MOE_NE0, c.get("moe_event.ne0"));
        assertEquals(EventLayout.MOE_NE1, c.get("moe_event.ne1"));
        assertEquals(EventLayout.MOE_NB1, c.get("moe_event.nb1"));
        assertEquals(EventLayout.MOE_FAILED, c.get("moe_event.failed"));
        assertEquals(EventLayout.MOE_IDS_OFFSET, c.get("moe_event.ids"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_CONTROL_ENABLED, c.get("moe_control.enabled"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_CONTROL_SIZE, c.get("moe_control"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_KEY_SIGNATURE, c.get("moe_plan_key.signature"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_KEY_GROUP, c.get("moe_plan_key.group"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_KEY_SIZE, c.get("moe_plan_key"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_IDS_TENSOR, c.get("moe_plan.ids_tensor"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_COPIED_SEQ, c.get("moe_plan.copied_seq"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_LAYER, c.get("moe_plan.layer"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_SIZE, c.get("moe_plan"));
        assertEquals(dev.infertop.bpf.ControlLayout.MOE_GROUP_BITS_SIZE, c.get("moe_group_bits"));
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor() == 0, String.join(" ", command) + " failed:\n" + output);
        return output;
    }

    @org.junit.jupiter.api.Test
    void theBoundsEventAndBpfBothKeepAreEqual() {
        org.junit.jupiter.api.Assertions.assertEquals(dev.infertop.bpf.ControlLayout.MAX_COUNTER_EVENTS,
                EventLayout.MAX_COUNTER_EVENTS);
        org.junit.jupiter.api.Assertions.assertEquals(dev.infertop.bpf.ControlLayout.MOE_PLAN_GROUPS,
                EventLayout.MOE_PLAN_GROUPS);
    }
}
