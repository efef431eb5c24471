/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Backends: which ops run on backends other than the CPU.
 *
 * The CPU backend's graphs are read node by node by the operator layer (ggml_graph_compute); other backends
 * (BLAS, CUDA, Vulkan, ...) compute their split of the graph in their own code, so here the split's nodes are
 * counted per op when ggml_backend_graph_compute_async starts: one pointer and one int read per node, one
 * record per graph. Only while the operator layer is on, and never for the CPU backend (its GUID is written
 * into `backend_ops_skip` by the loader).
 * Included at the end of infertop.bpf.c: uses its maps and helpers (events, control(), count_lost()).
 */
#ifndef INFERTOP_BACKENDS_BPF_H
#define INFERTOP_BACKENDS_BPF_H

struct backend_guid {
	__u8 bytes[16];
};

/* The CPU backend's GUID: its graphs are not counted here (all zeros: count every backend). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct backend_guid);
} backend_ops_skip SEC(".maps");

/* The record being filled (a split graph's counts), per CPU: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct backend_ops_event);
} backend_ops_scratch SEC(".maps");

struct backend_ops_walk {
	const void *nodes;
	struct backend_ops_event *event;
};

static long count_node_op(__u32 index, void *data)
{
	struct backend_ops_walk *walk = data;
	const void *tensor = 0;
	__s32 op = -1;

	if (bpf_probe_read_user(&tensor, sizeof(tensor), walk->nodes + (__u64)index * sizeof(void *)) || !tensor)
		return 0;
	if (bpf_probe_read_user(&op, sizeof(op), tensor + config.tensor_op_offset) || op < 0)
		return 0;
	__u32 slot = op < BACKEND_OP_SLOTS ? (__u32)op : BACKEND_OP_SLOTS - 1;
	/* clang drops a mask it can prove redundant, and the verifier then loses the bound: keep it. */
	asm volatile("" : "+r"(slot));
	slot &= BACKEND_OP_SLOTS - 1;
	walk->event->op_nodes[slot] += 1;
	walk->event->counted += 1;
	return 0;
}

/* No memcmp in BPF (clang leaves it as an external call): compare the 16 bytes as two words. */
static __always_inline int same_guid(const __u8 *a, const __u8 *b)
{
	__u64 a0, a1, b0, b1;

	__builtin_memcpy(&a0, a, 8);
	__builtin_memcpy(&a1, a + 8, 8);
	__builtin_memcpy(&b0, b, 8);
	__builtin_memcpy(&b1, b + 8, 8);
	return a0 == b0 && a1 == b1;
}

/* At ggml_backend_graph_compute_async entry: count the nodes of a non-CPU backend's graph per op. */
static __always_inline void backends_count_ops(__u64 pid_tgid, void *backend, void *cgraph, const __u8 *guid,
					      __s32 n_nodes)
{
	struct op_control *ctl = control();
	struct backend_guid *skip;
	struct backend_ops_walk walk = {};
	__u32 zero = 0;

	if (!ctl || !ctl->enabled || !cgraph || n_nodes <= 0)
		return;
	skip = bpf_map_lookup_elem(&backend_ops_skip, &zero);
	if (skip && same_guid(skip->bytes, guid))
		return;
	if (bpf_probe_read_user(&walk.nodes, sizeof(walk.nodes), cgraph + config.cgraph_nodes_offset) || !walk.nodes)
		return;
	walk.event = bpf_map_lookup_elem(&backend_ops_scratch, &zero);
	if (!walk.event)
		return;
	__builtin_memset(walk.event->op_nodes, 0, sizeof(walk.event->op_nodes));
	walk.event->header.kind = EVENT_BACKEND_OPS;
	walk.event->header.tid = (__u32)pid_tgid;
	walk.event->header.start_ns = bpf_ktime_get_ns();
	walk.event->header.end_ns = 0;
	walk.event->backend = (__u64)backend;
	__builtin_memcpy(walk.event->guid, guid, sizeof(walk.event->guid));
	walk.event->n_nodes = n_nodes;
	walk.event->counted = 0;
	bpf_loop(n_nodes < config.max_graph_nodes ? n_nodes : config.max_graph_nodes, count_node_op, &walk, 0);
	if (bpf_ringbuf_output(&events, walk.event, sizeof(*walk.event), BPF_RB_NO_WAKEUP))
		count_lost();
}

/*
 * A device backend's host dispatch, node by node: the Vulkan backend's graph compute calls
 * ggml_vk_build_graph(ctx, cgraph, node_idx, ...) once per node it records, and skips the nodes a fused
 * dispatch computes (its loop index jumps past them). Probed at that call instruction (the arguments are in
 * their registers), with the operator layer's per-thread probes: in its windows only. A graph is followed from
 * its first node; its record goes out when the compute returns (backends_end_dispatch).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct backend_dispatch_event);
} backend_dispatch_by_tid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct backend_dispatch_event);
} backend_dispatch_scratch SEC(".maps");

static __always_inline __u32 op_slot(__s32 op)
{
	__u32 slot = op >= 0 && op < BACKEND_OP_SLOTS ? (__u32)op : BACKEND_OP_SLOTS - 1;

	asm volatile("" : "+r"(slot));
	return slot & (BACKEND_OP_SLOTS - 1);
}

static __always_inline __s32 node_op(const void *nodes, __s32 index)
{
	const void *tensor = 0;
	__s32 op = -1;

	if (index < 0 || bpf_probe_read_user(&tensor, sizeof(tensor), nodes + (__u64)index * sizeof(void *)) || !tensor)
		return -1;
	if (bpf_probe_read_user(&op, sizeof(op), tensor + config.tensor_op_offset))
		return -1;
	return op;
}

/* The most nodes one fused dispatch skips that are counted by op (ggml-vulkan fuses at most 13 nodes). */
#define DISPATCH_MAX_FUSED 16

/* Nodes (from, to) exclusive were computed by the dispatch before them: count them by op. */
static __always_inline void count_fused(struct backend_dispatch_event *d, const void *nodes, __s32 from, __s32 to)
{
	for (int k = 1; k <= DISPATCH_MAX_FUSED; k++) {
		__s32 index = from + k;

		if (index >= to)
			break;
		d->op_fused[op_slot(node_op(nodes, index))] += 1;
	}
}

static __always_inline const void *cgraph_nodes(__u64 cgraph)
{
	const void *nodes = 0;

	if (bpf_probe_read_user(&nodes, sizeof(nodes), (const void *)cgraph + config.cgraph_nodes_offset))
		return 0;
	return nodes;
}

/* At `call ggml_vk_build_graph` in ggml_backend_vk_graph_compute: the node about to be recorded. */
SEC("uprobe")
int BPF_KPROBE(handle_vk_record)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	__u64 cgraph = (__u64)PT_REGS_PARM2(ctx);
	__s32 index = (__s32)PT_REGS_PARM3(ctx);
	struct op_control *ctl = control();
	struct backend_dispatch_event *d;
	const void *nodes;

	if (!is_target(pid_tgid))
		return 0;
	d = bpf_map_lookup_elem(&backend_dispatch_by_tid, &tid);
	if (!ctl || !ctl->enabled) {
		if (d)
			bpf_map_delete_elem(&backend_dispatch_by_tid, &tid); /* the window closed in this graph */
		return 0;
	}
	if (index == 0) {
		struct graph_start *start = bpf_map_lookup_elem(&graph_start_by_tid, &tid);
		__u32 zero = 0;

		if (!start)
			return 0; /* not inside ggml_backend_graph_compute_async: nothing to close it */
		d = bpf_map_lookup_elem(&backend_dispatch_scratch, &zero);
		if (!d)
			return 0;
		__builtin_memset(d, 0, sizeof(*d));
		d->header.kind = EVENT_BACKEND_DISPATCH;
		d->header.tid = tid;
		d->header.start_ns = bpf_ktime_get_ns();
		d->backend = start->backend;
		__builtin_memcpy(d->guid, start->guid, sizeof(d->guid));
		d->n_nodes = start->n_nodes;
		d->cgraph = cgraph;
		d->last_index = -1;
		if (bpf_map_update_elem(&backend_dispatch_by_tid, &tid, d, BPF_ANY))
			return 0;
		d = bpf_map_lookup_elem(&backend_dispatch_by_tid, &tid);
	}
	if (!d || d->cgraph != cgraph || index <= d->last_index)
		return 0;
	nodes = cgraph_nodes(cgraph);
	if (!nodes)
		return 0;
	if (index > d->last_index + 1)
		count_fused(d, nodes, d->last_index, index);
	d->last_op = op_slot(node_op(nodes, index));
	d->op_calls[op_slot((__s32)d->last_op)] += 1;
	d->calls += 1;
	d->last_index = index;
	return 0;
}

/* At ggml_backend_graph_compute_async's return: the thread's followed graph, if any, goes out whole. */
static __always_inline void backends_end_dispatch(__u32 tid)
{
	struct backend_dispatch_event *d = bpf_map_lookup_elem(&backend_dispatch_by_tid, &tid);
	struct op_control *ctl = control();
	const void *nodes;

	if (!d)
		return;
	nodes = cgraph_nodes(d->cgraph);
	if (ctl && ctl->enabled && nodes && d->last_index >= 0) {
		/* the last dispatch may compute the graph's last nodes too */
		count_fused(d, nodes, d->last_index, d->n_nodes);
		d->header.end_ns = bpf_ktime_get_ns();
		if (bpf_ringbuf_output(&events, d, sizeof(*d), BPF_RB_NO_WAKEUP))
			count_lost();
	}
	bpf_map_delete_elem(&backend_dispatch_by_tid, &tid);
}

#endif /* INFERTOP_BACKENDS_BPF_H */
