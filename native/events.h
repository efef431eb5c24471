/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every record the BPF programs write into the `events` ring buffer, in one place.
 * Each record starts with struct event_header; `kind` says which struct follows.
 * The Java side mirrors these layouts in dev.infertop.event.EventLayout, and EventLayoutTest compiles this
 * header with the host C compiler to check every offset, so a change here that Java misses fails the build.
 */
#ifndef INFERTOP_EVENTS_H
#define INFERTOP_EVENTS_H

#include <linux/types.h>

enum event_kind {
	EVENT_DECODE = 1,    /* one llama_decode() call: token layer */
	EVENT_GRAPH = 2,     /* one ggml_backend_graph_compute_async() call: graph layer, any backend */
	EVENT_CPU_GRAPH = 3, /* one ggml_graph_compute() call: graph layer, the CPU backend's own path */
	EVENT_NODE = 4,      /* one node of a CPU graph, read when ggml_graph_compute starts: operator layer */
	EVENT_ARRIVALS = 5,  /* one worker thread's barrier arrivals over one graph, sent when the graph ends */
	EVENT_FUSED = 7,     /* a worker thread runs a fused op over several nodes (call site in the node loop) */
	EVENT_GRAPH_SAME = 8, /* a graph whose node list is the one last read (graph reuse): not read again */
	EVENT_SCHED_OFF = 10, /* a target thread is back on a CPU after time off it: sched layer (sched.bpf.h) */
	EVENT_SCHED_CULPRIT = 11, /* who ran on that CPU while the thread was waiting for it: sched layer */
	EVENT_COUNTERS = 12, /* one worker thread's counter deltas per node group over one graph: counters layer */
	EVENT_BACKEND_OPS = 13, /* the ops of a graph computed on a backend other than the CPU (native/backends.bpf.h) */
	EVENT_MOE = 9,        /* MoE layer: a graph's signature, or one MUL_MAT_ID node's selected expert ids */
	EVENT_BATCH = 14,     /* one llama_decode() call's batch, token by token: token layer, sent before its decode */
	EVENT_SEQ_RM = 15,    /* llama_memory_seq_rm() (or an older release's kv seq_rm) called: token layer */
	EVENT_ENCODE = 16,    /* one llama_process(ENCODE) call, struct decode_event: token layer, counted apart */
	EVENT_GRAPH_TOKENS = 17, /* what one graph says of its tokens (struct graph_tokens_event): token layer */
	EVENT_WHISPER_FULL = 18, /* one whisper_full_with_state() call (struct whisper_full_event): token layer */
	EVENT_OFFLOAD = 19,   /* a backend synchronize or a tensor copy between backends (native/offload.bpf.h) */
	EVENT_OP_SAMPLE = 20, /* a target thread found on a CPU by the operator layer's clock sampler (op_sample.bpf.h) */
	EVENT_BACKEND_DISPATCH = 21, /* a device backend's host dispatch of one graph's nodes, node by node (backends.bpf.h) */
};

struct event_header {
	__u32 kind;     /* enum event_kind */
	__u32 tid;      /* kernel thread id of the calling thread */
	__u64 start_ns; /* bpf_ktime_get_ns() at function entry (CLOCK_MONOTONIC) */
	__u64 end_ns;   /* bpf_ktime_get_ns() at function return */
};

struct decode_event {
	struct event_header header;
	__u64 ctx;      /* struct llama_context *: one per context, so per-context TTFT/TPOT */
	__s32 n_tokens; /* llama_batch.n_tokens (or tokens added to a llama_batch_ext): 1 is a decode step, more is prefill */
	__s32 ret;      /* llama_decode's return value: 0 ok, 1 no KV slot, <0 error */
};

/* Tokens of one batch sent at most: a server's default n_batch (a per-CPU map value is at most 32 KiB). */
#define MAX_BATCH_TOKENS 2048

/* One token of a llama_batch: where it goes and whether llama.cpp must produce logits for it. */
struct batch_token {
	__s32 pos;    /* llama_batch.pos[i] */
	__s32 seq;    /* llama_batch.seq_id[i][0]: the sequence (a server slot, a speculative draft, ...) */
	__s8 logits;  /* llama_batch.logits[i]: 1 when this token's output is wanted (a prompt's last, a step) */
	__s8 n_seq;   /* llama_batch.n_seq_id[i], capped to 127: >1 when the token is shared by sequences */
	__u8 pad[2];
};

/*
 * Sent by llama_decode's return probe just before the decode_event of the same call (same tid, start_ns and
 * end_ns), only for batches that carry per-token positions and sequence ids (a server's, an app's);
 * llama_batch_get_one() batches (llama-bench, simple examples) have none and send no batch_event.
 * The record is cut after `recorded` tokens.
 */
struct batch_event {
	struct event_header header;
	__u64 ctx;        /* struct llama_context * */
	__s32 n_tokens;   /* llama_batch.n_tokens */
	__s32 recorded;   /* tokens that follow: min(n_tokens, MAX_BATCH_TOKENS), 0 when unreadable */
	struct batch_token tokens[MAX_BATCH_TOKENS];
};

/*
 * A sequence's positions [p0, p1) removed from a context's memory (p1 < 0: to the end). A server does this
 * after each speculative verification to drop the drafts the target rejected, so p0 tells how many were kept.
 * Sent at entry: start_ns == end_ns.
 */
struct seq_rm_event {
	struct event_header header;
	__u64 memory;     /* llama_memory_t (llama_memory_seq_rm) or struct llama_context * (older kv functions) */
	__s32 seq;        /* llama_seq_id, -1: every sequence */
	__s32 p0;         /* first position removed, -1: from 0 */
	__s32 p1;         /* end, -1: to the end */
	__s32 pad;
};

struct graph_event {
	struct event_header header;
	__u64 backend;     /* ggml_backend_t */
	__u8 guid[16];     /* *backend->guid: names the backend (config/backends.conf) */
	__s32 n_nodes;     /* cgraph->n_nodes, or -1 when it could not be read */
	__s32 ret;         /* enum ggml_status */
};

struct cpu_graph_event {
	struct event_header header;
	__u64 cgraph;      /* struct ggml_cgraph * */
	__s32 n_nodes;     /* cgraph->n_nodes, or -1 when it could not be read */
	__s32 ret;         /* enum ggml_status */
};

/* Barrier arrivals kept per thread per graph (a 70-layer model runs ~1500 node groups). */
#define MAX_ARRIVALS 4096

/*
 * One worker thread's walk through one graph: when it started and when it reached the barrier after each
 * node group. Kept in a per-thread slot while the graph runs (one store per node, no ring-buffer record),
 * and sent as one record of (ts - offsetof) + count * 8 bytes when ggml_graph_compute returns.
 */
/*
 * arrivals_event.readers: the layers an arrival calls into on this graph, decided once at the thread's start so
 * that a barrier hit with those layers off touches no map but the arrivals' own line (a hit is on the decode's
 * critical path when its thread arrives last, and each cold map is a cache miss after the weights streamed by).
 */
#define ARRIVAL_READ_MOE 1u      /* the MoE layer planned ids to copy on this graph */
#define ARRIVAL_READ_COUNTERS 2u /* the counters layer read this thread's counters at its start */

struct arrivals_event {
	struct event_header header; /* start_ns: thread start; end_ns: last arrival */
	__u64 graph_seq;
	__u32 count;       /* arrivals in ts[] */
	__u32 cpu_first;   /* CPU at thread start */
	__u32 cpu_last;    /* CPU at the last arrival */
	__u32 migrated;    /* the thread changed CPU during the graph */
	__u32 sampled;     /* internal: this graph is traced on this thread */
	__u32 readers;     /* internal: ARRIVAL_READ_* layers that read each arrival, fixed at thread start */
	__u64 ts[MAX_ARRIVALS];
};

/* Name bytes copied per node (GGML_MAX_NAME is 64 in every release so far). */
#define NODE_NAME_BYTES 64

struct node_event {
	struct event_header header; /* start_ns: when the graph compute started; end_ns: 0 */
	__u64 graph_seq;   /* per-process count of ggml_graph_compute calls (operator layer on) */
	__u64 tensor;      /* struct ggml_tensor * of the node */
	__u64 src[3];      /* its first three sources */
	__s64 ne[4];       /* its shape */
	__s32 index;       /* position in cgraph->nodes */
	__s32 n_nodes;     /* cgraph->n_nodes */
	__s32 op;          /* enum ggml_op, named by the target's own ggml_op_name() */
	__s32 type;        /* enum ggml_type */
	__s32 flags;       /* tensor flags (GGML_TENSOR_FLAG_COMPUTE ...) */
	__s32 op_param0;   /* op_params[0]: the unary/glu sub-op for UNARY/GLU */
	char name[NODE_NAME_BYTES];
};

struct thread_event {
	struct event_header header; /* start_ns: the moment; end_ns: 0 */
	__u64 graph_seq;   /* the graph the thread works on */
	__u32 cpu;         /* CPU the thread ran on */
	__u32 seq;         /* EVENT_FUSED: the node group (1-based) the fused op runs as */
	__u64 tensor;      /* EVENT_FUSED: first node of the fused group (2nd argument);
			      EVENT_GRAPH_SAME: graph_seq of the graph whose nodes were read */
	__u64 tensor2;     /* EVENT_FUSED: next node (3rd argument) */
};

/*
 * Read-only configuration the loader writes into .rodata before load (the only variable there, so it
 * sits at offset 0); the verifier then treats every field as a constant.
 */
struct probe_config {
	__u32 target_tgid;           /* only this process's threads are recorded; 0 = any */
	__u32 cgraph_n_nodes_offset; /* offset of `int n_nodes` in struct ggml_cgraph */
	__u32 cgraph_nodes_offset;   /* offset of `struct ggml_tensor **nodes` in struct ggml_cgraph */
	__u32 tensor_type_offset;    /* offsets in struct ggml_tensor, calibrated at attach time */
	__u32 tensor_ne_offset;
	__u32 tensor_op_offset;
	__u32 tensor_op_params_offset;
	__u32 tensor_flags_offset;
	__u32 tensor_src_offset;
	__u32 tensor_name_offset;
	__u32 max_graph_nodes;       /* nodes read per graph at most */
	__u32 graph_refresh;         /* re-read an unchanged graph after this many reuses (shapes may change) */
	__u32 tensor_data_offset;    /* MoE layer: `void *data` in struct ggml_tensor */
	__u32 tensor_nb_offset;      /* MoE layer: `size_t nb[4]` in struct ggml_tensor */
	__u32 op_mul_mat_id;         /* MoE layer: enum ggml_op of MUL_MAT_ID, or 0xffffffff: no self-planning */
	__u32 compute_flag;          /* MoE layer: GGML_TENSOR_FLAG_COMPUTE, 0 in releases without it */
	__u64 empty_ops[2];          /* MoE layer: bit per op the CPU loop skips (NONE, VIEW, ...) */
	__u32 batch_pos_offset;      /* token layer: offsets in struct llama_batch (dev.infertop.process.BatchLayout) */
	__u32 batch_n_seq_id_offset;
	__u32 batch_seq_id_offset;
	__u32 batch_logits_offset;
	__u32 op_get_rows;           /* token layer, graphs: enum ggml_op of GET_ROWS, or 0xffffffff: not read */
	__u32 type_i32;              /* token layer, graphs: enum ggml_type of I32 */
};

/* Switches the operator layer changes at run time (one-slot array map `op_control`). */
struct op_control {
	__u32 enabled;        /* read graphs and report node completions */
	__u32 every;          /* only every Nth graph (1 = all) */
	__u32 filter_threads; /* only threads listed in the `thread_filter` map report */
};

/*
 * Sched layer: one record each time a target thread is switched back in, covering its time off the CPU.
 * start_ns: switched out; end_ns: switched back in. Runnable (waiting for a CPU) is [start, end] when it
 * was preempted, [wake_ns, end] when it slept; sleeping is [start, wake_ns].
 */
struct sched_off_event {
	struct event_header header;
	__u64 wake_ns;     /* sched_wakeup of the thread, 0 when it was preempted (never slept) */
	__u64 ran_ns;      /* time it ran on a CPU before this switch-out (since its previous switch-in) */
	__u32 cpu_out;     /* CPU it left */
	__u32 cpu_in;      /* CPU it came back on */
	__u32 preempted;   /* switched out while runnable (TASK_RUNNING or preempt) */
	__u32 pad;
};

#define SCHED_COMM_BYTES 16

/*
 * Who ran on CPU `cpu` while target thread header.tid waited for it, summed per task over one wait
 * [header.start_ns, header.end_ns]. A few records follow a sched_off_event that had a wait.
 */
struct sched_culprit_event {
	struct event_header header;
	__u64 ns;          /* overlap of the culprit's run with the wait */
	__u32 pid;         /* the culprit's thread id */
	__u32 tgid;        /* the culprit's process id */
	__u32 cpu;
	__u32 pad;
	char comm[SCHED_COMM_BYTES];
};

/* Counters layer: events read per CPU, node groups counted per thread per graph. */
#define MAX_COUNTER_EVENTS 4
#define MAX_COUNTER_GROUPS 2048
#define MAX_COUNTER_CPUS 1024

/*
 * One worker thread's counter deltas over one graph, beside its arrivals record: delta[k] is what the
 * thread's CPU counted from the thread's previous reading (its start, or arrival k-1) to its arrival after
 * node group k. A group whose two readings were taken on different CPUs, or one of whose readings failed,
 * has no deltas (bit set in migrated_bits): per-CPU counters say nothing about a thread that moved. Raw
 * values; user space scales by enabled / running, summed over the record's counted groups.
 */
struct counters_event {
	struct event_header header; /* start_ns: thread start */
	__u64 graph_seq;
	__u32 count;       /* groups in delta[] */
	__u32 n_events;    /* events read (the rest of each row is 0) */
	__u32 migrated;    /* groups left uncounted: CPU changed between their readings, or a read failed */
	__u32 failed;      /* readings bpf_perf_event_read_value refused */
	__u64 enabled[MAX_COUNTER_EVENTS]; /* time enabled, summed over the counted groups */
	__u64 running[MAX_COUNTER_EVENTS]; /* time counting (less under multiplexing) */
	__u32 migrated_bits[MAX_COUNTER_GROUPS / 32];
	__u32 switched;    /* counted groups during which the thread was switched out (its context switches rose):
			      other tasks may have run on its CPU, and their counts are in the group's */
	__u32 pad;
	__u32 switched_bits[MAX_COUNTER_GROUPS / 32];
	__u64 delta[MAX_COUNTER_GROUPS][MAX_COUNTER_EVENTS];
};

/* Switches of the counters layer (one-slot array map `counter_control`). */
struct counter_control {
	__u32 enabled;  /* read counters at thread start and each barrier arrival */
	__u32 n_events; /* events per CPU in `counter_events` (index cpu * MAX_COUNTER_EVENTS + e) */
};

/* Slots of backend_ops_event.op_nodes: one per enum ggml_op (95 in v0.5.0); higher ops share the last. */
#define BACKEND_OP_SLOTS 128

/*
 * One graph computed on a backend other than the CPU (BLAS, CUDA, ...), read when
 * ggml_backend_graph_compute_async starts: how many of its nodes have each op. Its duration comes with the
 * EVENT_GRAPH record the same thread sends when the call returns.
 */
struct backend_ops_event {
	struct event_header header; /* start_ns: when the compute started; end_ns: 0 */
	__u64 backend;     /* ggml_backend_t */
	__u8 guid[16];     /* *backend->guid */
	__s32 n_nodes;     /* cgraph->n_nodes */
	__u32 counted;     /* nodes whose op was read */
	__u16 op_nodes[BACKEND_OP_SLOTS];
};

/*
 * One graph a device backend recorded node by node on the host (Vulkan: ggml_vk_build_graph per node, called
 * from its graph compute), sent when ggml_backend_graph_compute_async returns, before that call's EVENT_GRAPH:
 * per op, the nodes it was called for (a view's call dispatches nothing) and the nodes it skipped because an
 * earlier node's dispatch computes them (fused). Only graphs recorded whole: from their first node on, with the
 * operator layer on from entry to return. Host dispatch, never device time.
 */
struct backend_dispatch_event {
	struct event_header header; /* start_ns: the first node's call; end_ns: the compute's return */
	__u64 backend;     /* ggml_backend_t */
	__u8 guid[16];     /* *backend->guid */
	__s32 n_nodes;     /* cgraph->n_nodes */
	__u32 calls;       /* calls made, all ops */
	__u16 op_calls[BACKEND_OP_SLOTS];
	__u16 op_fused[BACKEND_OP_SLOTS];
	/* the record being filled: the last node called for, and its op */
	__s32 last_index;
	__u32 last_op;
	__u64 cgraph;
};

enum offload_what {
	OFFLOAD_SYNC = 1,        /* ggml_backend_synchronize(backend): the host waited for the backend's work */
	OFFLOAD_COPY = 2,        /* ggml_backend_tensor_copy(src, dst): the scheduler's blocking input copy */
	OFFLOAD_COPY_ASYNC = 3,  /* ggml_backend_tensor_copy_async(backend_src, backend_dst, src, dst) */
	OFFLOAD_EVENT_SYNC = 4,  /* ggml_backend_event_synchronize(event): the host waited for an event */
	OFFLOAD_VK_SUBMIT = 5,   /* ggml_vk_submit: the Vulkan backend hands a batch of recorded nodes to the queue */
	OFFLOAD_VK_FENCE = 6,    /* ggml_vk_wait_for_fence: the Vulkan backend waits for its queue (compute or synchronize) */
};

/* Bytes kept of a tensor's name in an offload record (ggml's GGML_MAX_NAME is 64). */
#define OFFLOAD_NAME_BYTES 64

/*
 * One call of the offload probes (graph layer, optional): its span (header start/end), for a synchronize the
 * backend it waited for, for a copy the source tensor's shape, type and bytes and both tensors' names (the
 * scheduler names an input's copy "BACKEND#name#N": the destination backend).
 */
struct offload_event {
	struct event_header header;
	__u64 backend;     /* ggml_backend_t waited for (OFFLOAD_SYNC), the destination (COPY_ASYNC), else 0 */
	__u8 guid[16];     /* *backend->guid, zeros without a backend */
	__u32 what;        /* enum offload_what */
	__s32 type;        /* src->type (copies) */
	__s64 ne[4];       /* src->ne (copies) */
	__u64 bytes;       /* src->ne[3] * src->nb[3]: ggml_nbytes of the contiguous tensors the scheduler copies */
	char src_name[OFFLOAD_NAME_BYTES];
	char dst_name[OFFLOAD_NAME_BYTES];
};

/* ----------------------------------------------------------------------------------------------------
 * MoE layer (native/moe.bpf.h).
 * ---------------------------------------------------------------------------------------------------- */

/* Bytes of one ids tensor copied per MUL_MAT_ID node at most (4096 int32): more is truncated, and reported. */
#define MOE_MAX_ID_BYTES 16384
/* Node groups a plan can name (the arrival index, as MAX_ARRIVALS). */
#define MOE_PLAN_GROUPS 4096

enum moe_subtype {
	MOE_GRAPH = 1, /* a traced graph started: its node-pointer signature, and whether a plan exists for it */
	MOE_IDS = 2,   /* the ids tensor of one planned node group, copied when the group's first thread arrived */
};

/* moe_event.group of ids read from the host copy the scheduler made of them (the experts computed elsewhere). */
#define MOE_GROUP_HOST_COPY 0xffffffffu

struct moe_event {
	struct event_header header; /* start_ns: the moment; end_ns: 0 */
	__u64 graph_seq;
	__u64 signature;  /* hash of the graph's node pointers (the operator layer's walk signature) */
	__u32 subtype;    /* enum moe_subtype */
	__u32 group;      /* MOE_IDS: node group (0-based arrival index) */
	__u32 value;      /* MOE_GRAPH: 1 when a plan exists; MOE_IDS: bytes copied into ids[] */
	__s32 layer;      /* MOE_IDS: model layer, from the plan */
	__s64 ne0;        /* MOE_IDS: ids->ne[0] (experts used per token) */
	__s64 ne1;        /* MOE_IDS: ids->ne[1] (tokens) */
	__u64 nb1;        /* MOE_IDS: ids->nb[1] (row stride, bytes) */
	__u32 failed;     /* MOE_IDS: 1 when the tensor or its data could not be read */
	__u32 pad;
	__u8 ids[MOE_MAX_ID_BYTES]; /* MOE_IDS: `value` bytes from ids->data: row t at t * nb1 */
};

/* Switches of the MoE layer (one-slot array map `moe_control`). */
struct moe_control {
	__u32 enabled;
};

/* Key and value of the `moe_plan` map: user space names, per graph signature, the node groups to copy at. */
struct moe_plan_key {
	__u64 signature;
	__u32 group;
	__u32 pad;
};

struct moe_plan {
	__u64 ids_tensor;  /* struct ggml_tensor * of the ids (MUL_MAT_ID's src[2]) */
	__u64 copied_seq;  /* graph_seq last copied (one thread copies per graph) */
	__s32 layer;
	__u32 pad;
};

/* Value of `moe_graph_plans` (key: signature): which node groups have a plan entry. */
struct moe_group_bits {
	__u64 bits[MOE_PLAN_GROUPS / 64];
};


/* ----------------------------------------------------------------------------------------------------
 * Token layer, from the graphs (infertop.bpf.c, handle_sched_graph_enter and the graph layer's entries).
 * ---------------------------------------------------------------------------------------------------- */

/*
 * What a tensor's name tells about a graph, as a runtime's description says (config/runtimes.conf, written into
 * the `graph_names` map): the wire values of dev.infertop.model.GraphNameKind.
 */
enum graph_name_kind {
	GRAPH_NAME_TOKEN_EMBEDDING = 1, /* a weight GET_ROWS reads one row of per token ("token_embd.weight") */
	GRAPH_NAME_POSITIONS = 2,       /* the I32 input of the batch's positions ("inp_pos") */
	GRAPH_NAME_KV_MASK = 3,         /* the attention mask: ne[0] is the KV length attended ("KQ_mask") */
	GRAPH_NAME_OUTPUT = 4,          /* the logits: ne[1] is the outputs computed ("result_output") */
	GRAPH_NAME_ENCODER_INPUT = 5,   /* an input only an encoder pass takes (whisper's "mel") */
	GRAPH_NAME_TOKEN_IDS = 6,       /* the I32 token ids a GET_ROWS reads an unnamed embedding by (whisper's "embd") */
	GRAPH_NAME_MOE_IDS = 7,         /* the selected experts' ids, MUL_MAT_ID's src[2] ("ffn_moe_topk-L"): MoE layer */
};

/* Name bytes a `graph_names` prefix may hold (whisper's "decoder.token_embedding.weight" is 30). */
#define GRAPH_NAME_BYTES 48
/* Prefixes all runtimes' descriptions may name together. */
#define GRAPH_NAMES_MAX 64
/* Nodes of a graph looked at, from its first: the embedding, the first layer's positions and mask are there. */
#define GRAPH_SCAN_NODES 48

/* The nodes a graph's token embedding, positions, KV mask and encoder input were found at (-1: at none). */
struct graph_scan_hint {
	__s32 tokens_node;
	__s32 positions_node;
	__s32 kv_node;
	__s32 encoder_node;
	__u32 uses; /* graphs read by this hint since its full scan */
};
/* A hint is used this many times, then a full scan renews it: a part missed once (a read that failed) is not
 * missed for the rest of the run. */
#define GRAPH_SCAN_HINT_USES 256

/* Key of the `graph_names` map (BPF_MAP_TYPE_LPM_TRIE): a prefix of prefixlen bits of a tensor name. */
struct graph_name_key {
	__u32 prefixlen;
	char name[GRAPH_NAME_BYTES];
};

struct graph_name_value {
	__u32 kind;    /* enum graph_name_kind */
	__u32 runtime; /* which description named it (its 1-based index in config/runtimes.conf) */
};

/* Which probe read the graph: the outermost graph call on the thread, so a graph is read once. */
enum graph_tokens_level {
	GRAPH_LEVEL_SCHED = 1,   /* ggml_backend_sched_graph_compute(_async): the whole graph (Ollama, llama.cpp) */
	GRAPH_LEVEL_BACKEND = 2, /* ggml_backend_graph_compute_async, not inside a scheduler call */
	GRAPH_LEVEL_CPU = 3,     /* ggml_graph_compute, not inside either */
};

/* graph_tokens_event.flags */
#define GRAPH_TOKENS_ENCODER 1u     /* an encoder input was among the nodes' sources: an encoder pass */
#define GRAPH_TOKENS_POSITIONS 2u   /* pos_first/pos_last were read from the positions input's data */
#define GRAPH_TOKENS_TRUNCATED 4u   /* the graph has more nodes than were looked at and something was not found */

/*
 * One graph in which a description's names were found, sent when the graph call returns (start_ns, end_ns:
 * that call). n_tokens is the row count of the GET_ROWS on the token embedding (its I32 input's ne[0]), -1
 * when there is none (an encoder pass). Every other figure is -1 when it could not be read.
 */
struct graph_tokens_event {
	struct event_header header;
	__u64 cgraph;      /* struct ggml_cgraph * */
	__s32 n_tokens;    /* tokens of the batch (rows the embedding GET_ROWS reads) */
	__s32 n_outputs;   /* the output's ne[1] when the graph's last node is the description's output */
	__s32 n_positions; /* the positions input's ne[0] (can be 4 per token: M-RoPE) */
	__s32 pos_first;   /* positions[0], when GRAPH_TOKENS_POSITIONS */
	__s32 pos_last;    /* positions[n_tokens - 1], when GRAPH_TOKENS_POSITIONS */
	__s32 kv_len;      /* the mask's ne[0]: KV cells attended */
	__u32 runtime;     /* the description whose token embedding (else encoder input) matched */
	__u32 level;       /* enum graph_tokens_level */
	__u32 flags;       /* GRAPH_TOKENS_* */
	__s32 ret;         /* the graph call's return value (enum ggml_status) */
};

/*
 * One whisper_full_with_state() call (whisper.cpp's transcription of one audio buffer; whisper_full and
 * whisper_full_parallel's threads call it), sent at its return (native/whisper.bpf.h): the audio it was given as
 * whisper_pcm_to_mel_with_state, which it calls first, saw it. n_samples is -1 when that call was not seen (a
 * caller that computed the mel spectrogram before and passed no samples).
 */
struct whisper_full_event {
	struct event_header header;
	__s32 n_samples; /* 16 kHz mono samples transcribed */
	__s32 ret;       /* whisper_full_with_state's return value: 0 ok */
};

/*
 * A target thread interrupted on its CPU by the operator layer's clock sampler (a cpu-clock perf event per CPU,
 * native/op_sample.bpf.h): where it was. start_ns == end_ns, the moment. User space learns which op each code
 * address runs from the samples that fall in the exact sample windows, and names the rest by it.
 */
struct op_sample_event {
	struct event_header header;
	__u64 ip;    /* the interrupted user-mode instruction address; 0 when the thread was in the kernel */
	__u32 cpu;   /* the CPU it ran on */
	__u32 pad;
};

#endif /* INFERTOP_EVENTS_H */
