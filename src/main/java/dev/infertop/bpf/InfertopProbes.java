package dev.infertop.bpf;


import dev.infertop.process.BatchLayout;
import dev.infertop.ffi.UprobeMultiSupport;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/** Opens, configures and loads native/infertop.bpf.c's object for the running architecture. */
public final class InfertopProbes {
    private InfertopProbes() {}

    public static final String RING_BUFFER_MAP = "events";
    public static final String LOST_EVENTS_MAP = "lost_events";
    public static final String OP_CONTROL_MAP = "op_control";
    public static final String THREAD_FILTER_MAP = "thread_filter";
    public static final String WALK_MEMO_MAP = "walk_memo";
    /** The operator layer's count of the graphs it began tracing (native/operator.bpf.h). */
    public static final String GRAPH_COUNTER_MAP = "graph_counter";
    /** Sched layer: handler runs per CPU (native/sched.bpf.h). */
    public static final String SCHED_HITS_MAP = "sched_hits";
    public static final String SCHED_EPOCH_MAP = "sched_epoch";
    /** The sched layer's tp_btf programs (native/sched.bpf.h). */
    public static final java.util.List<String> SCHED_PROGRAMS = java.util.List.of("handle_sched_switch",
            "handle_sched_wakeup");
    private static final Path KERNEL_BTF = Path.of("/sys/kernel/btf/vmlinux");

    /**
     * Why the sched layer cannot load here, or null: its tp_btf programs are verified against the running
     * kernel's own BTF, which a --btf file cannot stand in for. Without it they are not loaded at all, so the
     * other layers still load.
     */
    public static String schedUnavailableReason() {
        return java.nio.file.Files.isReadable(KERNEL_BTF) ? null
                : "tp_btf tracepoints need the kernel's own BTF (" + KERNEL_BTF + "), which this kernel lacks";
    }
    public static final String SCHED_WAITING_MAP = "sched_waiting";
    public static final String MOE_CONTROL_MAP = "moe_control";
    public static final String MOE_PLAN_MAP = "moe_plan";
    public static final String MOE_GRAPH_PLANS_MAP = "moe_graph_plans";

    /**
     * Struct offsets the probes read, found at attach time (never per-version constants): struct ggml_cgraph's
     * n_nodes and nodes, struct ggml_tensor's fields. {@code null} tensor offsets leave the operator layer off.
     */
    public record StructOffsets(int cgraphNodesCount, int cgraphNodes, int tensorType, int tensorNe, int tensorOp,
                                int tensorOpParams, int tensorFlags, int tensorSrc, int tensorName,
                                int tensorData, int tensorNb) {}

    /**
     * A graph whose node pointers match the one read last is not read again (llama.cpp reuses its decode
     * graph token after token), except every this many graphs, so shapes that change in place (the KV
     * length seen by attention views) stay at most this many tokens old.
     */
    public static final int GRAPH_REFRESH = 32;

    /** Upper bound of nodes read per graph (a 70-layer model has ~3000). */
    public static final int MAX_GRAPH_NODES = 16384;

    /** The BPF object directory name for this JVM's architecture: x86_64 or arm64. */
    public static String architecture() {
        String arch = System.getProperty("os.arch");
        return switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "arm64";
            default -> throw new IllegalStateException("infertop ships BPF objects for x86_64 and arm64, not " + arch);
        };
    }

    public static byte[] objectBytes(String architecture) {
        String resource = "/dev/infertop/bpf/" + architecture + "/infertop.bpf.o";
        try (InputStream in = InfertopProbes.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("this infertop build lacks " + resource + ": rebuild it with clang installed");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource + ": " + e.getMessage(), e);
        }
    }

    /**
     * What the MoE probes need to plan a graph themselves while the operator layer reads it: MUL_MAT_ID's op
     * number, the COMPUTE flag and the ops the CPU loop skips. {@link #NONE}: user space plans every graph.
     */
    public record MoeConfig(int opMulMatId, int computeFlag, java.util.List<Integer> emptyOps) {
        public static final MoeConfig NONE = new MoeConfig(-1, 0, java.util.List.of());
    }

    /**
     * What the graph probes need to read a graph's tokens: GET_ROWS's op number and I32's type number from the
     * calibrated tables. {@link #NONE}: no layout, the graphs' tokens are not read.
     */
    public record GraphTokensConfig(int opGetRows, int typeI32) {
        public static final GraphTokensConfig NONE = new GraphTokensConfig(-1, -1);
    }

    /**
     * The object loaded for {@code targetTgid} (0: any process), with a ring of {@code ringBytes} (a power of two
     * and a multiple of the page size), against {@code btfCustomPath} (null: the kernel's own BTF).
     */
    public static BpfObject load(int targetTgid, int ringBytes, StructOffsets offsets, Path btfCustomPath)
            throws BpfException {
        return load(targetTgid, ringBytes, offsets, btfCustomPath, MoeConfig.NONE,
                BatchLayout.LLAMA_H);
    }

    public static BpfObject load(int targetTgid, int ringBytes, StructOffsets offsets, Path btfCustomPath,
                                 MoeConfig moe, BatchLayout batch) throws BpfException {
        return load(targetTgid, ringBytes, offsets, btfCustomPath, moe, batch, GraphTokensConfig.NONE);
    }

    /** @param batch where the target's struct llama_batch keeps its per-token arrays (see BatchCalibrator) */
    public static BpfObject load(int targetTgid, int ringBytes, StructOffsets offsets, Path btfCustomPath,
                                 MoeConfig moe, BatchLayout batch, GraphTokensConfig graphTokens)
            throws BpfException {
        BpfObject object = BpfObject.open("infertop", objectBytes(architecture()), btfCustomPath);
        try {
            MemorySegment config = object.rodata();
            if (config.byteSize() < ControlLayout.CONFIG_SIZE) {
                throw new BpfException("infertop.bpf.o: .rodata is " + config.byteSize() + " bytes, expected struct probe_config");
            }
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TARGET_TGID, targetTgid);
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_CGRAPH_N_NODES_OFFSET, offsets.cgraphNodesCount());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_CGRAPH_NODES_OFFSET, offsets.cgraphNodes());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_TYPE_OFFSET, offsets.tensorType());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_NE_OFFSET, offsets.tensorNe());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_OP_OFFSET, offsets.tensorOp());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_OP_PARAMS_OFFSET, offsets.tensorOpParams());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_FLAGS_OFFSET, offsets.tensorFlags());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_SRC_OFFSET, offsets.tensorSrc());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_NAME_OFFSET, offsets.tensorName());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_MAX_GRAPH_NODES, MAX_GRAPH_NODES);
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_GRAPH_REFRESH, GRAPH_REFRESH);
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_DATA_OFFSET, offsets.tensorData());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TENSOR_NB_OFFSET, offsets.tensorNb());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_OP_MUL_MAT_ID, moe.opMulMatId());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_COMPUTE_FLAG, moe.computeFlag());
            long[] emptyOps = new long[2];
            for (int op : moe.emptyOps()) {
                if (op >= 0 && op < 128) {
                    emptyOps[op / 64] |= 1L << (op % 64);
                }
            }
            config.set(ValueLayout.JAVA_LONG_UNALIGNED, ControlLayout.CONFIG_EMPTY_OPS, emptyOps[0]);
            config.set(ValueLayout.JAVA_LONG_UNALIGNED, ControlLayout.CONFIG_EMPTY_OPS + 8, emptyOps[1]);
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_BATCH_POS_OFFSET, batch.posOffset());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_BATCH_N_SEQ_ID_OFFSET, batch.nSeqIdOffset());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_BATCH_SEQ_ID_OFFSET, batch.seqIdOffset());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_BATCH_LOGITS_OFFSET, batch.logitsOffset());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_OP_GET_ROWS, graphTokens.opGetRows());
            config.set(ValueLayout.JAVA_INT, ControlLayout.CONFIG_TYPE_I32, graphTokens.typeI32());
            object.setMaxEntries(RING_BUFFER_MAP, ringBytes);
            if (schedUnavailableReason() != null) {
                for (String program : SCHED_PROGRAMS) {
                    object.setAutoload(program, false);
                }
            }
            if (System.getenv("INFERTOP_DEBUG") != null) {
                System.err.println("infertop: " + UprobeMultiSupport.verdict().line());
            }
            if (UprobeMultiSupport.available()) {
                object.loadUprobesForMultiLinks();
            }
            object.load();
            return object;
        } catch (BpfException | RuntimeException e) {
            object.close();
            throw e;
        }
    }
}
