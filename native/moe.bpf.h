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
 * Plans are kept per graph signature (the operator layer's hash of the node-pointer array; llama.cpp
 * reuses its graphs): `moe_graph_plans` says which node groups are planned, `moe_plan` names the ids
 * tensor and the model layer of each. Groups are numbered as the CPU loop would run them without fused
 * ops (executed nodes: not empty, COMPUTE flag set); a thread's arrival index plus the fused ops it ran so
 * far in the graph gives that number. The plan is made here, while the operator layer walks a graph it
 * has not seen (moe_on_node, before any thread starts), so even the first graph of a shape is read; user
 * space writes the same plan when the release gives no COMPUTE flag (older loops) or the walk could not
 * make it. Every traced graph sends a MOE_GRAPH record, so graphs that ran without a plan are counted in
 * user space, never silently missed.
 *
 * Included from infertop.bpf.c after the operator layer's maps and before its node walk and handlers,
 * which call moe_on_graph() (graph start), moe_on_node() (walk), moe_on_fused() and moe_on_arrival()
 * (barrier arrival).
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

/* The walk of a graph with no plan yet: the plan being made from its nodes (one walker at a time). */
struct moe_walk {
	__u64 graph_seq;
	__u64 signature;
	__u64 last_ids;   /* ids tensor of the last MUL_MAT_ID seen: its layer is planned */
	__u32 executed;   /* executed nodes so far: the next one's group number */
	__u32 active;     /* this walk makes a plan */
	__s32 layers;     /* MoE layers planned so far (the layer when a name carries none) */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct moe_walk);
} moe_walk SEC(".maps");

/* Fused ops a thread ran in the graph so far: each merged two executed nodes into one group. */
struct moe_thread {
	__u64 graph_seq;
	__u32 fused;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct moe_thread);
} moe_thread SEC(".maps");

/* All zero, never written: the initial value of a new moe_graph_plans entry (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct moe_group_bits);
} moe_zero_bits SEC(".maps");

/* A record is built here (16 KiB is too big for the stack), then sent with the bytes it uses. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct moe_event);
} moe_scratch SEC(".maps");

/*
 * The word of a group's bit in struct moe_group_bits. The barrier keeps the compiler from dropping the mask
 * after a bounds check it can see; the verifier cannot, and needs the mask to bound the access.
 */
static __always_inline __u32 moe_word(__u32 group)
{
	asm volatile("" : "+r"(group));
	return (group >> 6) & (MOE_PLAN_GROUPS / 64 - 1);
}

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
	} else {
		__builtin_memset(&cur->groups, 0, sizeof(cur->groups));
	}
	struct moe_walk *walk = bpf_map_lookup_elem(&moe_walk, &zero);
	if (walk) {
		walk->graph_seq = graph_seq;
		walk->signature = signature;
		walk->last_ids = 0;
		walk->executed = 0;
		walk->layers = 0;
		/* Only a loop that skips by the COMPUTE flag is numbered here; older ones are left to user space. */
		walk->active = !bits && !signature_failed && config.op_mul_mat_id != 0xffffffff && config.compute_flag;
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

/*
 * A node's name, copied from the target for moe_layer_of (a global function's pointer argument must say how many
 * bytes it reaches). Per CPU: the walk that fills it runs on this CPU until the call returns.
 */
struct node_name_bytes {
	char bytes[NODE_NAME_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct node_name_bytes);
} moe_name_scratch SEC(".maps");

/*
 * "ffn_moe_gate-12" → 12 (llama.cpp names nodes "name-il"); -1 when the name does not end in -digits.
 * A global (not inlined) function: the verifier checks it once, on its own, and its caller sees only "some
 * int". Inlined into the walk, its 64-step loop multiplied the paths through the rest of moe_on_node: most of
 * the time the kernel took to verify the whole object, at every start (measurements.md; strace -T of BPF_PROG_LOAD).
 */
__noinline int moe_layer_of(const struct node_name_bytes *name)
{
	int layer = -1, value = 0, digits = 0;

	if (!name)
		return -1;
	for (int i = 0; i < NODE_NAME_BYTES; i++) {
		char c = name->bytes[i];

		if (!c)
			break;
		if (c == '-') {
			value = 0;
			digits = 1;
			layer = -1;
		} else if (digits && c >= '0' && c <= '9' && value < 100000) {
			value = value * 10 + (c - '0');
			layer = value;
		} else {
			digits = 0;
			layer = -1;
		}
	}
	return layer;
}

/*
 * The operator layer's walk read node `index` of a graph: plan each MUL_MAT_ID whose ids tensor is not the one
 * planned last (a layer's MUL_MAT_IDs run one after another on its ids). MoeAggregator.makePlan follows the
 * same rule for the graphs planned in user space; MoePlannerAgreementTest runs both on the same graphs.
 */
static __always_inline void moe_on_node(__u64 graph_seq, __s32 op, __s32 flags, __u64 ids, const void *tensor)
{
	__u32 zero = 0, group;
	struct moe_walk *walk = bpf_map_lookup_elem(&moe_walk, &zero);
	struct moe_plan_key key = {};
	struct moe_plan plan = {};
	struct moe_group_bits *bits;
	struct moe_current *cur;

	if (!walk || !walk->active || walk->graph_seq != graph_seq || op < 0 || op >= 128)
		return;
	if ((config.empty_ops[(op >> 6) & 1] >> (op & 63)) & 1 || !(flags & config.compute_flag))
		return; /* the CPU loop skips it: no group */
	group = walk->executed++;
	if ((__u32)op != config.op_mul_mat_id || !ids || ids == walk->last_ids || group >= MOE_PLAN_GROUPS)
		return;
	walk->last_ids = ids;
	key.signature = walk->signature;
	key.group = group;
	plan.ids_tensor = ids;
	/* The name is read again here, into a map value: the record's copy is a ring buffer reservation, which a
	 * global function's argument may not be on every kernel infertop supports. Once per planned layer. */
	struct node_name_bytes *name = bpf_map_lookup_elem(&moe_name_scratch, &zero);

	if (name && bpf_probe_read_user(name->bytes, sizeof(name->bytes), tensor + config.tensor_name_offset))
		name->bytes[0] = 0;
	plan.layer = name ? moe_layer_of(name) : -1; /* a checked pointer: what every kernel's verifier accepts */
	if (plan.layer < 0)
		plan.layer = walk->layers;
	walk->layers++;
	if (bpf_map_update_elem(&moe_plan, &key, &plan, BPF_ANY))
		return;
	bits = bpf_map_lookup_elem(&moe_graph_plans, &key.signature);
	if (!bits) {
		struct moe_group_bits *empty = bpf_map_lookup_elem(&moe_zero_bits, &zero);

		if (!empty || bpf_map_update_elem(&moe_graph_plans, &key.signature, empty, BPF_NOEXIST))
			return;
		bits = bpf_map_lookup_elem(&moe_graph_plans, &key.signature);
		if (!bits)
			return;
	}
	bits->bits[moe_word(group)] |= 1ULL << (group & 63);
	cur = bpf_map_lookup_elem(&moe_current, &zero);
	if (cur && cur->graph_seq == graph_seq) {
		cur->groups.bits[moe_word(group)] |= 1ULL << (group & 63);
		cur->planned = 1;
	}
}

/* A worker thread runs a fused op (two nodes as one group): later groups number one lower per fusion. */
static __always_inline void moe_on_fused(__u32 tid, __u64 graph_seq)
{
	struct moe_thread *t = bpf_map_lookup_elem(&moe_thread, &tid);
	struct moe_thread fresh = {.graph_seq = graph_seq, .fused = 1};

	if (!moe_enabled())
		return;
	if (!t) {
		bpf_map_update_elem(&moe_thread, &tid, &fresh, BPF_ANY);
		return;
	}
	if (t->graph_seq != graph_seq) {
		t->graph_seq = graph_seq;
		t->fused = 0;
	}
	t->fused += 1;
}

/* Whether graph `graph_seq` has MoE ids to copy at its arrivals: ARRIVAL_READ_MOE, else 0 (at a thread's start). */
static __always_inline __u32 moe_thread_start(__u64 graph_seq)
{
	__u32 zero = 0;
	struct moe_current *cur = bpf_map_lookup_elem(&moe_current, &zero);

	return cur && cur->planned && cur->graph_seq == graph_seq ? ARRIVAL_READ_MOE : 0;
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

	__u32 planned_group = group;
	struct moe_thread *t;

	cur = bpf_map_lookup_elem(&moe_current, &zero);
	if (!cur || !cur->planned || cur->graph_seq != graph_seq)
		return;
	t = bpf_map_lookup_elem(&moe_thread, &tid);
	if (t && t->graph_seq == graph_seq)
		planned_group += t->fused;
	if (planned_group >= MOE_PLAN_GROUPS)
		return;
	if (!(cur->groups.bits[moe_word(planned_group)] & (1ULL << (planned_group & 63))))
		return;
	key.signature = cur->signature;
	key.group = planned_group;
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
