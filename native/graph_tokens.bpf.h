/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Token layer, from the graphs: what a graph's first nodes say of the batch it computes, for programs where
 * llama.cpp's API says nothing (llama_decode inlined by LTO, an engine that runs ggml's scheduler itself, a
 * runtime with no llama.cpp at all).
 *
 * At the outermost graph call on a thread (the scheduler's, else a backend's, else the CPU's own), the first
 * GRAPH_SCAN_NODES nodes' sources are named against `graph_names`, the prefixes the runtimes' descriptions give
 * (config/runtimes.conf): the GET_ROWS on a token embedding with an I32 input gives the batch's tokens (that
 * input's ne[0]); a positions input its length and first and last values (read from its data: host memory on the
 * CPU backend, unread elsewhere); a mask its ne[0] (the KV length); the last node, when it is the output, the
 * outputs computed. One record per graph that has a token embedding or an encoder input, sent at the call's
 * return. Every read is of the target's memory: bounded, and a failed one leaves its figure at -1.
 * Included at the end of infertop.bpf.c: uses its maps and helpers (events, config, count_lost()).
 */
#ifndef INFERTOP_GRAPH_TOKENS_BPF_H
#define INFERTOP_GRAPH_TOKENS_BPF_H

/* Name prefixes → what they mean (user space fills it after load: bpf.GraphNames). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, GRAPH_NAMES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct graph_name_key);
	__type(value, struct graph_name_value);
} graph_names SEC(".maps");

/* Largest batch believed (a larger ne[0] is not a batch: the record says -1). */
#define GRAPH_MAX_TOKENS (1 << 24)

/* The outermost graph call in progress on a thread, and what its graph said. */
struct graph_tokens_pending {
	struct graph_tokens_event e;
	__u32 found;  /* 1: the record is sent at this call's return */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct graph_tokens_pending);
} graph_tokens_pending SEC(".maps");

struct graph_scan {
	const void *nodes;
	const void *previous; /* the node before: a source that is it is an intermediate result, not looked up */
	__u64 positions_data;
	__s32 n_nodes;
	__s32 n_tokens;
	__s32 n_positions;
	__s32 kv_len;
	__u32 runtime;
	__u32 encoder;
	struct graph_scan_hint found_at; /* the node each was found at, -1 where none was */
};

/*
 * A process's graphs of one node count are built alike, step after step: where the last full scan of such a graph
 * found the token embedding, positions, mask and encoder input, the next graph is looked at first (a node each
 * instead of a scan of up to GRAPH_SCAN_NODES nodes, the hot path of every graph). Each hinted node's sources are
 * still matched by name and kind, so a hint that no longer fits finds nothing and the full scan runs again; every
 * GRAPH_SCAN_HINT_USES graphs it runs anyway and renews the hint.
 */
struct graph_scan_hint_key {
	__u32 tgid;
	__s32 n_nodes;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 256);
	__type(key, struct graph_scan_hint_key);
	__type(value, struct graph_scan_hint);
} graph_scan_hints SEC(".maps");

/* The kind `graph_names` gives the tensor's name, 0 when none; *runtime set on a match. */
static __always_inline __u32 graph_name_kind(const void *tensor, __u32 *runtime)
{
	struct graph_name_key key = {.prefixlen = GRAPH_NAME_BYTES * 8};
	struct graph_name_value *value;

	if (bpf_probe_read_user(key.name, sizeof(key.name), tensor + config.tensor_name_offset))
		return 0;
	/* Bytes past the name's NUL are whatever the target left there: cut them, so a prefix can only match the name. */
	for (int i = 0; i < GRAPH_NAME_BYTES; i++) {
		if (key.name[i] == 0) {
			key.prefixlen = i * 8;
			break;
		}
	}
	value = bpf_map_lookup_elem(&graph_names, &key);
	if (!value)
		return 0;
	*runtime = value->runtime;
	return value->kind;
}

static __always_inline __s32 read_ne(const void *tensor, int dim)
{
	__s64 ne = -1;

	if (bpf_probe_read_user(&ne, sizeof(ne), tensor + config.tensor_ne_offset + 8 * dim) || ne < 0 ||
	    ne > GRAPH_MAX_TOKENS)
		return -1;
	return (__s32)ne;
}

/* Source `j` of node `node` (op `op`), looked up by name. */
static __always_inline void scan_source(struct graph_scan *scan, const void *src, const void *const *srcs, int j,
					__s32 op)
{
	__u32 runtime = 0, kind;
	const void *rows = 0;
	__s32 type = -1;

	if (!src || src == scan->previous)
		return;
	/* Weights and inputs are leaves (GGML_OP_NONE, 0 in every release): an op's result is not named. One
	 * 4-byte read instead of a name's, for most sources. */
	if (bpf_probe_read_user(&type, sizeof(type), src + config.tensor_op_offset) || type != 0)
		return;
	type = -1;
	kind = graph_name_kind(src, &runtime);
	switch (kind) {
	case GRAPH_NAME_TOKEN_EMBEDDING:
		/* ggml_get_rows(embedding, tokens): the embedding is src[0], the I32 token ids src[1]. */
		if (j != 0 || scan->n_tokens >= 0 || op != (__s32)config.op_get_rows)
			return;
		rows = srcs[1];
		if (!rows || bpf_probe_read_user(&type, sizeof(type), rows + config.tensor_type_offset) ||
		    type != (__s32)config.type_i32)
			return;
		scan->n_tokens = read_ne(rows, 0);
		if (scan->n_tokens >= 0)
			scan->runtime = runtime;
		break;
	case GRAPH_NAME_TOKEN_IDS:
		/* ggml_get_rows(embedding, tokens) where the runtime names its inputs but not its weights (whisper.cpp):
		 * the I32 token ids are src[1], named. */
		if (j != 1 || scan->n_tokens >= 0 || op != (__s32)config.op_get_rows)
			return;
		if (bpf_probe_read_user(&type, sizeof(type), src + config.tensor_type_offset) ||
		    type != (__s32)config.type_i32)
			return;
		scan->n_tokens = read_ne(src, 0);
		if (scan->n_tokens >= 0)
			scan->runtime = runtime;
		break;
	case GRAPH_NAME_POSITIONS:
		if (scan->n_positions >= 0)
			return;
		scan->n_positions = read_ne(src, 0);
		if (bpf_probe_read_user(&scan->positions_data, sizeof(scan->positions_data),
					src + config.tensor_data_offset))
			scan->positions_data = 0;
		break;
	case GRAPH_NAME_KV_MASK:
		if (scan->kv_len < 0)
			scan->kv_len = read_ne(src, 0);
		break;
	case GRAPH_NAME_ENCODER_INPUT:
		scan->encoder = 1;
		if (!scan->runtime)
			scan->runtime = runtime;
		break;
	}
}

/*
 * Node `index`'s sources, looked up by name. A global function: the verifier checks it once, on its own, where
 * as bpf_loop's callback (static) it walked its paths again for every iteration it could not prove alike, and in
 * each of the three programs that read graphs (seconds per program on Linux 6.x, at every attach).
 */
__noinline int graph_scan_node(__u32 index, struct graph_scan *scan)
{
	const void *node = 0;
	const void *srcs[4] = {}; /* FLASH_ATTN_EXT takes its mask as src[3] */
	__s32 op = -1;
	int had_tokens, had_positions, had_kv;
	__u32 had_encoder;

	if (!scan)
		return 1;
	if (bpf_probe_read_user(&node, sizeof(node), scan->nodes + (__u64)index * sizeof(void *)) || !node)
		return 0;
	if (bpf_probe_read_user(&op, sizeof(op), node + config.tensor_op_offset))
		op = -1;
	if (bpf_probe_read_user(srcs, sizeof(srcs), node + config.tensor_src_offset))
		return 0;
	had_tokens = scan->n_tokens >= 0;
	had_positions = scan->n_positions >= 0;
	had_kv = scan->kv_len >= 0;
	had_encoder = scan->encoder;
	scan_source(scan, srcs[0], srcs, 0, op);
	scan_source(scan, srcs[1], srcs, 1, op);
	scan_source(scan, srcs[2], srcs, 2, op);
	scan_source(scan, srcs[3], srcs, 3, op);
	if (!had_tokens && scan->n_tokens >= 0)
		scan->found_at.tokens_node = (__s32)index;
	if (!had_positions && scan->n_positions >= 0)
		scan->found_at.positions_node = (__s32)index;
	if (!had_kv && scan->kv_len >= 0)
		scan->found_at.kv_node = (__s32)index;
	if (!had_encoder && scan->encoder)
		scan->found_at.encoder_node = (__s32)index;
	scan->previous = node;
	/* Everything a decode graph can say found: the rest of the graph is layers alike. */
	return scan->n_tokens >= 0 && scan->n_positions >= 0 && scan->kv_len >= 0;
}

static long scan_node(__u32 index, void *data)
{
	return graph_scan_node(index, data) ? 1 : 0;
}

static __always_inline void scan_reset(struct graph_scan *scan)
{
	scan->previous = 0;
	scan->positions_data = 0;
	scan->n_tokens = -1;
	scan->n_positions = -1;
	scan->kv_len = -1;
	scan->runtime = 0;
	scan->encoder = 0;
	scan->found_at.tokens_node = -1;
	scan->found_at.positions_node = -1;
	scan->found_at.kv_node = -1;
	scan->found_at.encoder_node = -1;
	scan->found_at.uses = 0;
}

/* The hinted node, when there is one, holds what the full scan found there (a -1 hint: found nowhere). */
static __always_inline int hint_holds(struct graph_scan *scan, __s32 node, __s32 n_nodes, int what)
{
	if (node < 0)
		return 1;
	if (node >= n_nodes || node >= GRAPH_SCAN_NODES)
		return 0;
	graph_scan_node((__u32)node, scan);
	switch (what) {
	case 0: return scan->n_tokens >= 0;
	case 1: return scan->n_positions >= 0;
	case 2: return scan->kv_len >= 0;
	default: return scan->encoder != 0;
	}
}

/*
 * What a graph of `n_nodes` nodes says, read at the nodes where the last full scan of one found it; 0 (the scan
 * reset) when there is no hint or a hinted node no longer holds its part: the caller scans in full.
 */
static __always_inline int scan_hinted(struct graph_scan *scan, __s32 n_nodes)
{
	struct graph_scan_hint_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .n_nodes = n_nodes};
	struct graph_scan_hint *hint = bpf_map_lookup_elem(&graph_scan_hints, &key);
	struct graph_scan_hint at;

	if (!hint || hint->uses >= GRAPH_SCAN_HINT_USES)
		return 0;
	hint->uses++; /* one writer per process in practice; a lost increment only delays the renewal */
	at = *hint;
	if (hint_holds(scan, at.tokens_node, n_nodes, 0) && hint_holds(scan, at.positions_node, n_nodes, 1) &&
	    hint_holds(scan, at.kv_node, n_nodes, 2) && hint_holds(scan, at.encoder_node, n_nodes, 3))
		return 1;
	scan_reset(scan);
	return 0;
}

/* The graph call's entry at `level`: reads the graph unless an outer graph call on this thread did. */
static __always_inline void graph_tokens_enter(__u32 level, const void *cgraph)
{
	struct graph_tokens_pending *pending, fresh = {};
	struct graph_tokens_event *e = &fresh.e;
	struct graph_scan scan = {};
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	const void *last = 0;
	__s32 n_nodes;
	__u32 scanned;

	if (config.op_get_rows == 0xffffffff || !cgraph)
		return;
	pending = bpf_map_lookup_elem(&graph_tokens_pending, &tid);
	/* An outer call's graph (a scheduler's holds the splits its backends compute): read there, once. A pending
	 * entry of this level or an inner one is one whose return was not seen (attached mid-call): replaced. */
	if (pending && pending->e.level < level)
		return;
	n_nodes = read_n_nodes(cgraph);
	e->header.kind = EVENT_GRAPH_TOKENS;
	e->header.tid = tid;
	e->cgraph = (__u64)cgraph;
	e->level = level;
	e->n_tokens = -1;
	e->n_outputs = -1;
	e->n_positions = -1;
	e->pos_first = -1;
	e->pos_last = -1;
	e->kv_len = -1;
	scan_reset(&scan);
	scan.n_nodes = n_nodes;
	if (n_nodes > 0 &&
	    !bpf_probe_read_user(&scan.nodes, sizeof(scan.nodes), cgraph + config.cgraph_nodes_offset) && scan.nodes) {
		if (!scan_hinted(&scan, n_nodes)) {
			scanned = n_nodes < GRAPH_SCAN_NODES ? (__u32)n_nodes : GRAPH_SCAN_NODES;
			bpf_loop(scanned, scan_node, &scan, 0);
			/* A graph that said nothing leaves no hint: graphs of its size are scanned in full as before. */
			struct graph_scan_hint_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .n_nodes = n_nodes};
			if (scan.found_at.tokens_node >= 0 || scan.found_at.encoder_node >= 0)
				bpf_map_update_elem(&graph_scan_hints, &key, &scan.found_at, BPF_ANY);
			else
				bpf_map_delete_elem(&graph_scan_hints, &key);
		}
		if (n_nodes > GRAPH_SCAN_NODES && (scan.n_tokens < 0 || scan.n_positions < 0 || scan.kv_len < 0))
			e->flags |= GRAPH_TOKENS_TRUNCATED;
		/* The logits are the last node in llama.cpp's graphs: [n_vocab, n_outputs]. */
		__u32 runtime = 0;
		if (!bpf_probe_read_user(&last, sizeof(last),
					 scan.nodes + ((__u64)(n_nodes - 1) & 0xffffff) * sizeof(void *)) && last &&
		    graph_name_kind(last, &runtime) == GRAPH_NAME_OUTPUT)
			e->n_outputs = read_ne(last, 1);
	}
	e->n_tokens = scan.n_tokens;
	e->n_positions = scan.n_positions;
	e->kv_len = scan.kv_len;
	e->runtime = scan.runtime;
	if (scan.encoder)
		e->flags |= GRAPH_TOKENS_ENCODER;
	if (scan.positions_data && scan.n_tokens > 0 && scan.n_tokens <= scan.n_positions) {
		__u64 last_pos = scan.positions_data + 4 * (__u64)(scan.n_tokens - 1);
		if (!bpf_probe_read_user(&e->pos_first, sizeof(e->pos_first), (const void *)scan.positions_data) &&
		    !bpf_probe_read_user(&e->pos_last, sizeof(e->pos_last), (const void *)last_pos))
			e->flags |= GRAPH_TOKENS_POSITIONS;
		else
			e->pos_first = e->pos_last = -1;
	}
	fresh.found = scan.n_tokens >= 0 || scan.encoder;
	e->header.start_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&graph_tokens_pending, &tid, &fresh, BPF_ANY);
}

/* The graph call's return at `level`: the record of the graph read at its entry, if any. */
static __always_inline void graph_tokens_exit(__u32 level, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct graph_tokens_pending *pending = bpf_map_lookup_elem(&graph_tokens_pending, &tid);

	if (!pending || pending->e.level != level)
		return;
	if (pending->found) {
		pending->e.header.end_ns = bpf_ktime_get_ns();
		pending->e.ret = (__s32)ret;
		if (bpf_ringbuf_output(&events, &pending->e, sizeof(pending->e), BPF_RB_NO_WAKEUP))
			count_lost();
	}
	bpf_map_delete_elem(&graph_tokens_pending, &tid);
}

/*
 * enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, struct ggml_cgraph *graph)
 * The whole graph, before the scheduler splits it among backends (ggml_backend_sched_graph_compute calls this).
 */
SEC("uprobe")
int BPF_KPROBE(handle_sched_graph_enter, void *sched, void *cgraph)
{
	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	graph_tokens_enter(GRAPH_LEVEL_SCHED, cgraph);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_sched_graph_exit, long ret)
{
	if (!is_target(bpf_get_current_pid_tgid()))
		return 0;
	graph_tokens_exit(GRAPH_LEVEL_SCHED, ret);
	return 0;
}

#endif /* INFERTOP_GRAPH_TOKENS_BPF_H */
