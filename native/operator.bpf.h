/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Operator layer: the graph walked once per compute, each thread's barrier arrivals, fused calls. Included by
 * infertop.bpf.c after the graph layer.
 */
/* ----------------------------------------------------------------------------------------------------
 * Operator layer.
 *
 * Costs are what matter here: hundreds of node executions per token, each a trap if probed.  So:
 *  - the graph is read once per compute, by one thread, at ggml_graph_compute entry (handle_graph_walk),
 *    one record per node: which tensor, op, shape, sources, name;
 *  - each worker thread reports only when it reaches the barrier after a node, from a probe on the
 *    `call ggml_barrier` instruction in the node loop (a call the kernel emulates: no single-step);
 *  - user space rebuilds, per thread, node k = the k-th executed node group, and splits each thread's
 *    time into work (until it reaches the barrier) and barrier wait (until the last thread arrives).
 * ---------------------------------------------------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct op_control);
} op_control SEC(".maps");

/* Graphs seen by ggml_graph_compute since load (slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} graph_counter SEC(".maps");

/*
 * graph_seq of the graph being computed if it is sampled, else 0: set at ggml_graph_compute entry (before any
 * worker starts on it), read by each worker at its start. So a switch of op_control in the middle of a graph
 * never starts a thread on a graph that was not walked (it would report its arrivals under the graph before).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} walk_current SEC(".maps");

/* Thread ids the operator layer reports when op_control.filter_threads is set (--threads). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} thread_filter SEC(".maps");

/*
 * Per-thread arrival buffers: a slot per worker thread (assigned at its first graph), so a barrier hit is a
 * hash lookup and a store; the buffers go to the ring buffer once per graph (flush_arrivals).
 */
#define MAX_THREAD_SLOTS 64

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);   /* tid */
	__type(value, __u32); /* slot */
} thread_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} slots_used SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct arrivals_event);
} arrivals_by_slot SEC(".maps");

/*
 * The last tid -> slot looked up on this CPU. A worker thread stays on its CPU for many barrier hits (hundreds
 * a token), and a slot, once given, is never taken back, so this per-CPU entry answers most
 * hits without the hash lookup (the verifier inlines a per-CPU array lookup).
 */
struct slot_cache {
	__u32 tid;
	__u32 slot;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slot_cache);
} slot_cache SEC(".maps");

static __always_inline struct arrivals_event *arrivals_of(__u32 tid, int assign)
{
	__u32 zero = 0, index;
	struct slot_cache *cached = bpf_map_lookup_elem(&slot_cache, &zero);
	__u32 *slot;
	__u64 *used;

	if (cached && cached->tid == tid && tid != 0) {
		index = cached->slot;
		return bpf_map_lookup_elem(&arrivals_by_slot, &index);
	}
	slot = bpf_map_lookup_elem(&thread_slot, &tid);
	if (!slot) {
		if (!assign)
			return 0;
		used = bpf_map_lookup_elem(&slots_used, &zero);
		if (!used)
			return 0;
		__u64 taken = __sync_fetch_and_add(used, 1);
		if (taken >= MAX_THREAD_SLOTS)
			return 0; /* more worker threads than slots: those are not traced */
		index = (__u32)taken;
		bpf_map_update_elem(&thread_slot, &tid, &index, BPF_NOEXIST);
		slot = bpf_map_lookup_elem(&thread_slot, &tid);
		if (!slot)
			return 0;
	}
	index = *slot;
	if (cached) {
		cached->tid = tid;
		cached->slot = index;
	}
	return bpf_map_lookup_elem(&arrivals_by_slot, &index);
}

/* Counters layer (native/counters.bpf.h, included at the end). */
static __always_inline __u32 counters_thread_start(struct arrivals_event *a);
static __always_inline void counters_node_done(__u32 tid, __u32 index);
static __always_inline void counters_send(__u32 tid);

static __always_inline void send_arrivals(struct arrivals_event *a)
{
	__u32 count = a->count < MAX_ARRIVALS ? a->count : MAX_ARRIVALS;
	__u64 size = __builtin_offsetof(struct arrivals_event, ts) + (__u64)(count & (MAX_ARRIVALS - 1)) * 8;

	if (count == MAX_ARRIVALS)
		size = sizeof(*a);
	a->header.kind = EVENT_ARRIVALS;
	if (bpf_ringbuf_output(&events, a, size, BPF_RB_NO_WAKEUP))
		count_lost();
	counters_send(a->header.tid);
	a->count = 0;
	a->sampled = 0;
}

struct flush_ctx {
	__u64 graph_seq;
};

static long flush_slot(void *map, __u32 *key, struct arrivals_event *a, struct flush_ctx *ctx)
{
	if (a->sampled && a->graph_seq == ctx->graph_seq)
		send_arrivals(a);
	return 0;
}

/*
 * The last graph read, to skip reading it again: llama.cpp reuses the same graph for token after token
 * (same cgraph, same node tensors), so a signature of its node-pointer array says "nothing to read".
 */
struct walk_memo {
	__u64 signature;
	__u64 full_seq;   /* graph_seq of the last graph read node by node */
	__u32 reuses;     /* graphs since then that matched it */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_memo);
} walk_memo SEC(".maps");

#define SIGNATURE_CHUNK 64 /* node pointers hashed per bpf_probe_read_user */

struct pointer_chunk {
	__u64 pointers[SIGNATURE_CHUNK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pointer_chunk);
} signature_scratch SEC(".maps");

struct signature_ctx {
	const void *nodes;
	__u64 hash;
	__s32 n_nodes;
	__s32 failed;
};

static long hash_chunk(__u32 chunk, void *data)
{
	struct signature_ctx *sig = data;
	__u32 zero = 0;
	struct pointer_chunk *scratch = bpf_map_lookup_elem(&signature_scratch, &zero);
	__s32 left = sig->n_nodes - (__s32)(chunk * SIGNATURE_CHUNK);
	__u32 size;

	if (!scratch || left <= 0)
		return 1;
	/* 1..SIGNATURE_CHUNK pointers, written so the verifier can see the bounds (8..512 bytes). */
	size = ((((__u32)(left < SIGNATURE_CHUNK ? left : SIGNATURE_CHUNK) - 1) & (SIGNATURE_CHUNK - 1)) + 1) *
	       sizeof(__u64);
	__builtin_memset(scratch->pointers, 0, sizeof(scratch->pointers));
	if (bpf_probe_read_user(scratch->pointers, size,
				sig->nodes + (__u64)chunk * SIGNATURE_CHUNK * sizeof(__u64))) {
		sig->failed = 1;
		return 1;
	}
	for (int i = 0; i < SIGNATURE_CHUNK; i++)
		sig->hash = (sig->hash ^ scratch->pointers[i]) * 0x100000001b3ULL;
	return 0;
}

struct walk_ctx {
	const void *nodes;
	__u64 graph_seq;
	__u64 start_ns;
	__u32 tid;
	__s32 n_nodes;
	__u32 stopped; /* the ring filled: the list was read without its tail */
};

static __always_inline struct op_control *control(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&op_control, &zero);
}

static __always_inline int sampled(const struct op_control *ctl, __u64 graph_seq)
{
	return ctl && ctl->enabled && (ctl->every <= 1 || graph_seq % ctl->every == 0);
}

#include "moe.bpf.h"

static long walk_node(__u32 index, void *data)
{
	struct walk_ctx *walk = data;
	const void *tensor = 0;
	struct node_event *e;

	if (bpf_probe_read_user(&tensor, sizeof(tensor), walk->nodes + (__u64)index * sizeof(void *)) || !tensor)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		walk->stopped = 1;
		return 1; /* the ring is full: the rest of this graph would be lost too */
	}
	e->header.kind = EVENT_NODE;
	e->header.tid = walk->tid;
	e->header.start_ns = walk->start_ns;
	e->header.end_ns = 0;
	e->graph_seq = walk->graph_seq;
	e->tensor = (__u64)tensor;
	e->index = index;
	e->n_nodes = walk->n_nodes;
	if (bpf_probe_read_user(&e->op, sizeof(e->op), tensor + config.tensor_op_offset))
		e->op = -1;
	if (bpf_probe_read_user(&e->type, sizeof(e->type), tensor + config.tensor_type_offset))
		e->type = -1;
	if (bpf_probe_read_user(&e->flags, sizeof(e->flags), tensor + config.tensor_flags_offset))
		e->flags = 0;
	if (bpf_probe_read_user(&e->op_param0, sizeof(e->op_param0), tensor + config.tensor_op_params_offset))
		e->op_param0 = 0;
	if (bpf_probe_read_user(e->ne, sizeof(e->ne), tensor + config.tensor_ne_offset))
		__builtin_memset(e->ne, 0, sizeof(e->ne));
	if (bpf_probe_read_user(e->src, sizeof(e->src), tensor + config.tensor_src_offset))
		__builtin_memset(e->src, 0, sizeof(e->src));
	if (bpf_probe_read_user(e->name, sizeof(e->name), tensor + config.tensor_name_offset))
		e->name[0] = 0;
	moe_on_node(walk->graph_seq, e->op, e->flags, e->src[2], tensor);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline void emit_thread_event(__u32 kind, __u32 tid, __u64 graph_seq, __u32 seq, __u64 tensor,
					      __u64 tensor2)
{
	struct thread_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count_lost();
		return;
	}
	e->header.kind = kind;
	e->header.tid = tid;
	e->header.start_ns = bpf_ktime_get_ns();
	e->header.end_ns = 0;
	e->graph_seq = graph_seq;
	e->cpu = bpf_get_smp_processor_id();
	e->seq = seq;
	e->tensor = tensor;
	e->tensor2 = tensor2;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* ggml_graph_compute(cgraph, cplan) entry: number the graph and, when sampled, record its nodes. */
SEC("uprobe")
int BPF_KPROBE(handle_graph_walk, void *cgraph)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct op_control *ctl = control();
	struct walk_ctx walk = {};
	__u32 zero = 0;
	__u64 *counter;

	__u64 *current = bpf_map_lookup_elem(&walk_current, &zero);

	if (!is_target(pid_tgid) || !current)
		return 0;
	*current = 0; /* until this graph is known to be sampled and walked */
	if (!ctl || !ctl->enabled || !cgraph)
		return 0;
	counter = bpf_map_lookup_elem(&graph_counter, &zero);
	if (!counter)
		return 0;
	walk.graph_seq = __sync_fetch_and_add(counter, 1) + 1;
	if (!sampled(ctl, walk.graph_seq))
		return 0;
	if (bpf_probe_read_user(&walk.nodes, sizeof(walk.nodes), cgraph + config.cgraph_nodes_offset) || !walk.nodes)
		return 0;
	walk.n_nodes = read_n_nodes(cgraph);
	if (walk.n_nodes <= 0)
		return 0;
	*current = walk.graph_seq;
	walk.start_ns = bpf_ktime_get_ns();
	walk.tid = (__u32)pid_tgid;

	/* Same node pointers as the graph read last, and read recently enough: say so instead of reading. */
	struct walk_memo *memo = bpf_map_lookup_elem(&walk_memo, &zero);
	struct signature_ctx sig = {
		.nodes = walk.nodes,
		.hash = 0xcbf29ce484222325ULL ^ (__u64)cgraph ^ ((__u64)walk.n_nodes << 32),
		.n_nodes = walk.n_nodes,
	};
	__u32 chunks = ((__u32)walk.n_nodes + SIGNATURE_CHUNK - 1) / SIGNATURE_CHUNK;

	bpf_loop(chunks < 1024 ? chunks : 1024, hash_chunk, &sig, 0);
	moe_on_graph(walk.tid, walk.graph_seq, sig.hash, sig.failed);
	/*
	 * A server's graphs keep their node pointers from batch to batch while the batch's size changes the
	 * shapes (a prompt, then decode steps of 1 to n_seq tokens): the first node's ne[1] (the batch's tokens)
	 * and the last's (the outputs) join the signature, so a graph of another batch size is read again.
	 */
	__u64 shaped = sig.hash;
	void *edge_node = 0;
	__s64 edge_ne1 = 0;

	if (!bpf_probe_read_user(&edge_node, sizeof(edge_node), walk.nodes) && edge_node &&
	    !bpf_probe_read_user(&edge_ne1, sizeof(edge_ne1), edge_node + config.tensor_ne_offset + 8))
		shaped = (shaped ^ (__u64)edge_ne1) * 0x100000001b3ULL;
	edge_node = 0;
	edge_ne1 = 0;
	if (!bpf_probe_read_user(&edge_node, sizeof(edge_node),
				 walk.nodes + ((__u64)(walk.n_nodes - 1) & 0xffffff) * sizeof(__u64)) && edge_node &&
	    !bpf_probe_read_user(&edge_ne1, sizeof(edge_ne1), edge_node + config.tensor_ne_offset + 8))
		shaped = (shaped ^ (__u64)edge_ne1) * 0x100000001b3ULL;
	if (memo && !sig.failed && memo->full_seq && memo->signature == shaped &&
	    memo->reuses < config.graph_refresh) {
		memo->reuses += 1;
		emit_thread_event(EVENT_GRAPH_SAME, walk.tid, walk.graph_seq, 0, memo->full_seq, 0);
		return 0;
	}
	bpf_loop(walk.n_nodes < config.max_graph_nodes ? walk.n_nodes : config.max_graph_nodes, walk_node, &walk, 0);
	if (memo) {
		/* A list read in part is no list to refer to: the next graph with these nodes is read again. */
		memo->signature = sig.failed || walk.stopped ? 0 : shaped;
		memo->full_seq = walk.graph_seq;
		memo->reuses = 0;
	}
	return 0;
}

/* ggml_graph_compute_thread entry: this thread starts on the current graph. */
SEC("uprobe")
int BPF_KPROBE(handle_thread_start)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct op_control *ctl = control();
	__u32 tid = (__u32)pid_tgid;
	struct arrivals_event *a;
	__u32 zero = 0;
	__u64 *counter;
	__u64 graph_seq;

	/* Not ctl->enabled: a graph walked before the layer was paused is reported whole by every thread. */
	if (!is_target(pid_tgid) || !ctl)
		return 0;
	counter = bpf_map_lookup_elem(&walk_current, &zero);
	if (!counter)
		return 0;
	graph_seq = *counter;
	if (!graph_seq || (ctl->filter_threads && !bpf_map_lookup_elem(&thread_filter, &tid)))
		return 0;
	a = arrivals_of(tid, 1);
	if (!a)
		return 0;
	if (a->sampled && a->count)
		send_arrivals(a); /* a graph whose end was not seen (layer switched mid-graph) */
	a->header.tid = tid;
	a->header.start_ns = bpf_ktime_get_ns();
	a->header.end_ns = 0;
	a->graph_seq = graph_seq;
	a->count = 0;
	a->cpu_first = bpf_get_smp_processor_id();
	a->cpu_last = a->cpu_first;
	a->migrated = 0;
	a->sampled = 1;
	a->readers = moe_thread_start(graph_seq) | counters_thread_start(a);
	return 0;
}

/* The `call ggml_barrier` after each node in the node loop: this thread finished its share of a node. */
SEC("uprobe")
int BPF_KPROBE(handle_node_done)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct arrivals_event *a;
	__u32 index, cpu;

	if (!is_target(pid_tgid))
		return 0;
	a = arrivals_of((__u32)pid_tgid, 0);
	if (!a || !a->sampled)
		return 0;
	index = a->count;
	if (index >= MAX_ARRIVALS)
		return 0;
	a->ts[index & (MAX_ARRIVALS - 1)] = bpf_ktime_get_ns();
	a->count = index + 1;
	if (a->readers & ARRIVAL_READ_MOE)
		moe_on_arrival((__u32)pid_tgid, a->graph_seq, index);
	cpu = bpf_get_smp_processor_id();
	if (cpu != a->cpu_last) {
		a->migrated = 1;
		a->cpu_last = cpu;
	}
	if (a->readers & ARRIVAL_READ_COUNTERS)
		counters_node_done((__u32)pid_tgid, index);
	return 0;
}

/* ggml_graph_compute return: every thread is done with the graph; send their arrivals. */
SEC("uretprobe")
int BPF_KRETPROBE(handle_graph_done)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct flush_ctx flush = {};
	__u32 zero = 0;
	__u64 *counter;

	if (!is_target(pid_tgid))
		return 0;
	counter = bpf_map_lookup_elem(&graph_counter, &zero);
	if (!counter)
		return 0;
	flush.graph_seq = *counter;
	bpf_for_each_map_elem(&arrivals_by_slot, flush_slot, &flush, 0);
	return 0;
}

/* Whether the running graph is one whose node list was found unchanged (handle_graph_walk): not read again. */
static __always_inline int graph_is_reused(void)
{
	__u32 zero = 0;
	struct walk_memo *memo = bpf_map_lookup_elem(&walk_memo, &zero);

	return memo && memo->reuses > 0;
}

/* A `call <fused op>(params, node, next)` in the node loop: the next group spans several nodes. */
SEC("uprobe")
int BPF_KPROBE(handle_fused_call, void *params, void *node, void *next)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct arrivals_event *a;

	if (!is_target(pid_tgid))
		return 0;
	a = arrivals_of(tid, 0);
	if (!a || !a->sampled)
		return 0;
	/* The MoE layer numbers node groups per thread from these calls on every graph, reused or not. */
	moe_on_fused(tid, a->graph_seq);
	if (graph_is_reused())
		return 0; /* user space keeps the fused groups of the graph it read: same nodes, same fusion */
	emit_thread_event(EVENT_FUSED, tid, a->graph_seq, a->count + 1, (__u64)node, (__u64)next);
	return 0;
}
