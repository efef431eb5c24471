/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * MoE layer: the experts each token of a batch was routed to, from every planned MUL_MAT_ID node.
 *
 * MUL_MAT_ID's src[2] holds the selected expert ids (I32, ne0 = experts used per token, ne1 = tokens). Its
 * data is computed during the graph (argsort / top-k) and ggml's graph allocator hands that memory to
 * later nodes after its last consumer ran, so the ids are read while they are valid: when the first
 * thread reaches the barrier after the first MUL_MAT_ID group that consumes them (the ids were produced
 * groups earlier; their consumers are still running or just done).
 *
 * Which group that is depends on the graph (empty nodes skipped, fused ops), so user space works it out
 * from the nodes the operator layer read and hands BPF a plan per graph signature (the operator layer's
 * hash of the node-pointer array): `moe_graph_plans` says which groups are planned, `moe_plan` names the
 * ids tensor and the model layer of each. llama.cpp reuses its graphs, so a plan made after the first
 * graph of a shape serves the rest. Every traced graph sends a MOE_GRAPH record, so graphs that ran
 * without a plan are counted in user space, never silently missed.
 *
 * Included from infertop.bpf.c after the operator layer's maps and before its handlers, which call
 * moe_on_graph() (graph start) and moe_on_arrival() (barrier arrival).
 */
#ifndef INFERTOP_MOE_BPF_H
#define INFERTOP_MOE_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct moe_control);
} moe_control SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct moe_plan_key);
	__type(value, struct moe_plan);
} moe_plan SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64); /* graph signature */
	__type(value, struct moe_group_bits);
} moe_graph_plans SEC(".maps");

/* The graph running now: its signature and planned groups, copied from moe_graph_plans at its start. */
struct moe_current {
	__u64 graph_seq;
	__u64 signature;
	__u32 planned;
	__u32 pad;
	struct moe_group_bits groups;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct moe_current);
} moe_current SEC(".maps");

/* A record is built here (16 KiB is too big for the stack), then sent with the bytes it uses. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct moe_event);
} moe_scratch SEC(".maps");

static __always_inline int moe_enabled(void)
{
	__u32 zero = 0;
	struct moe_control *ctl = bpf_map_lookup_elem(&moe_control, &zero);

	return ctl && ctl->enabled;
}

static __always_inline void moe_send(struct moe_event *e, __u64 size)
{
	if (bpf_ringbuf_output(&events, e, size, BPF_RB_NO_WAKEUP))
		count_lost();
}

/* A traced graph starts (handle_graph_walk, one thread): note its plan and tell user space its signature. */
static __always_inline void moe_on_graph(__u32 tid, __u64 graph_seq, __u64 signature, int signature_failed)
{
	__u32 zero = 0;
	struct moe_current *cur;
	struct moe_group_bits *bits = 0;
	struct moe_event *e;

	if (!moe_enabled())
		return;
	cur = bpf_map_lookup_elem(&moe_current, &zero);
	e = bpf_map_lookup_elem(&moe_scratch, &zero);
	if (!cur || !e)
		return;
	if (!signature_failed)
		bits = bpf_map_lookup_elem(&moe_graph_plans, &signature);
	cur->planned = 0; /* first: a thread must not match the old bits against the new graph */
	cur->graph_seq = graph_seq;
	cur->signature = signature;
	if (bits) {
		__builtin_memcpy(&cur->groups, bits, sizeof(cur->groups));
		cur->planned = 1;
	}
	e->header.kind = EVENT_MOE;
	e->header.tid = tid;
	e->header.start_ns = bpf_ktime_get_ns();
	e->header.end_ns = 0;
	e->graph_seq = graph_seq;
	e->signature = signature_failed ? 0 : signature;
	e->subtype = MOE_GRAPH;
	e->group = 0;
	e->value = cur->planned;
	e->layer = -1;
	e->ne0 = e->ne1 = 0;
	e->nb1 = 0;
	e->failed = signature_failed ? 1 : 0;
	moe_send(e, __builtin_offsetof(struct moe_event, ids));
}

/* A worker thread reached the barrier after node group `group` of graph `graph_seq`. */
static __always_inline void moe_on_arrival(__u32 tid, __u64 graph_seq, __u32 group)
{
	struct moe_plan_key key = {};
	struct moe_current *cur;
	struct moe_plan *plan;
	struct moe_event *e;
	const void *tensor, *data = 0;
	__u32 zero = 0;
	__u64 copied, bytes, size = 0;
	__s64 ne[2] = {};
	__u64 nb1 = 0;

	cur = bpf_map_lookup_elem(&moe_current, &zero);
	if (!cur || !cur->planned || cur->graph_seq != graph_seq || group >= MOE_PLAN_GROUPS)
		return;
	if (!(cur->groups.bits[(group >> 6) & (MOE_PLAN_GROUPS / 64 - 1)] & (1ULL << (group & 63))))
		return;
	key.signature = cur->signature;
	key.group = group;
	plan = bpf_map_lookup_elem(&moe_plan, &key);
	if (!plan)
		return;
	/* The first thread to arrive copies; the others see the graph already taken. */
	copied = plan->copied_seq;
	if (copied == graph_seq || __sync_val_compare_and_swap(&plan->copied_seq, copied, graph_seq) != copied)
		return;
	e = bpf_map_lookup_elem(&moe_scratch, &zero);
	if (!e)
		return;
	tensor = (const void *)plan->ids_tensor;
	e->header.kind = EVENT_MOE;
	e->header.tid = tid;
	e->header.start_ns = bpf_ktime_get_ns();
	e->header.end_ns = 0;
	e->graph_seq = graph_seq;
	e->signature = key.signature;
	e->subtype = MOE_IDS;
	e->group = group;
	e->value = 0;
	e->layer = plan->layer;
	e->failed = 0;
	if (bpf_probe_read_user(ne, sizeof(ne), tensor + config.tensor_ne_offset) ||
	    bpf_probe_read_user(&nb1, sizeof(nb1), tensor + config.tensor_nb_offset + 8) ||
	    bpf_probe_read_user(&data, sizeof(data), tensor + config.tensor_data_offset) || !data ||
	    ne[0] <= 0 || ne[1] <= 0) {
		e->failed = 1;
	}
	e->ne0 = ne[0];
	e->ne1 = ne[1];
	e->nb1 = nb1;
	if (!e->failed) {
		/* Rows are nb1 apart (a view of the argsort: nb1 can exceed ne0 * 4): copy the span, rows and gaps. */
		bytes = (__u64)(ne[1] - 1) * nb1 + (__u64)ne[0] * 4;
		if (bytes >= MOE_MAX_ID_BYTES) {
			size = MOE_MAX_ID_BYTES;
			if (bpf_probe_read_user(e->ids, MOE_MAX_ID_BYTES, data))
				e->failed = 1;
		} else {
			size = bytes & (MOE_MAX_ID_BYTES - 1);
			if (size && bpf_probe_read_user(e->ids, size, data))
				e->failed = 1;
		}
		if (e->failed)
			size = 0;
	}
	e->value = (__u32)size;
	moe_send(e, __builtin_offsetof(struct moe_event, ids) + size);
}

#endif /* INFERTOP_MOE_BPF_H */
