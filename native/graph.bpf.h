/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Graph layer: every backend's graph compute (ggml_backend_graph_compute_async) and the CPU backend's
 * (ggml_graph_compute), each entry remembered per thread and completed at its return. Included by
 * infertop.bpf.c after the token layer.
 */
struct graph_start {
	__u64 start_ns;
	__u64 backend;
	__u8 guid[16];
	__s32 n_nodes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct graph_start);
} graph_start_by_tid SEC(".maps");

struct cpu_graph_start {
	__u64 start_ns;
	__u64 cgraph;
	__s32 n_nodes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct cpu_graph_start);
} cpu_graph_start_by_tid SEC(".maps");


/* Tokens from the graphs where llama.cpp's API says nothing: read at the outermost graph call (its scheduler's). */
#include "graph_tokens.bpf.h"

/* native/backends.bpf.h, included at the end: ops of graphs on backends other than the CPU. */
static __always_inline void backends_count_ops(__u64 pid_tgid, void *backend, void *cgraph, const __u8 *guid,
					      __s32 n_nodes);

/* native/backends.bpf.h: a device backend's node-by-node dispatch of this graph, sent before its record. */
static __always_inline void backends_end_dispatch(__u32 tid);

/*
 * enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph *cgraph)
 * struct ggml_backend starts with `ggml_guid_t guid`, a pointer to the backend's 16-byte GUID.
 */
SEC("uprobe")
int BPF_KPROBE(handle_graph_enter, void *backend, void *cgraph)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct graph_start start = {};
	void *guid_ptr = 0;

	if (!is_target(pid_tgid))
		return 0;
	start.backend = (__u64)backend;
	if (!bpf_probe_read_user(&guid_ptr, sizeof(guid_ptr), backend) && guid_ptr)
		bpf_probe_read_user(start.guid, sizeof(start.guid), guid_ptr);
	start.n_nodes = read_n_nodes(cgraph);
	backends_count_ops(pid_tgid, backend, cgraph, start.guid, start.n_nodes);
	graph_tokens_enter(GRAPH_LEVEL_BACKEND, cgraph);
	start.start_ns = bpf_ktime_get_ns();
	__u32 tid = (__u32)pid_tgid;
	bpf_map_update_elem(&graph_start_by_tid, &tid, &start, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_graph_exit, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct graph_start *start;
	struct graph_event *e;

	if (!is_target(pid_tgid))
		return 0;
	graph_tokens_exit(GRAPH_LEVEL_BACKEND, ret);
	backends_end_dispatch(tid);
	start = bpf_map_lookup_elem(&graph_start_by_tid, &tid);
	if (!start)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		bpf_map_delete_elem(&graph_start_by_tid, &tid);
		return 0;
	}
	e->header.kind = EVENT_GRAPH;
	e->header.tid = tid;
	e->header.start_ns = start->start_ns;
	e->header.end_ns = bpf_ktime_get_ns();
	e->backend = start->backend;
	__builtin_memcpy(e->guid, start->guid, sizeof(e->guid));
	e->n_nodes = start->n_nodes;
	e->ret = (__s32)ret;
	bpf_map_delete_elem(&graph_start_by_tid, &tid);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* enum ggml_status ggml_graph_compute(struct ggml_cgraph *cgraph, struct ggml_cplan *cplan) */
SEC("uprobe")
int BPF_KPROBE(handle_cpu_graph_enter, void *cgraph)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cpu_graph_start start = {};

	if (!is_target(pid_tgid))
		return 0;
	start.cgraph = (__u64)cgraph;
	start.n_nodes = read_n_nodes(cgraph);
	graph_tokens_enter(GRAPH_LEVEL_CPU, cgraph);
	start.start_ns = bpf_ktime_get_ns();
	__u32 tid = (__u32)pid_tgid;
	bpf_map_update_elem(&cpu_graph_start_by_tid, &tid, &start, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_cpu_graph_exit, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct cpu_graph_start *start;
	struct cpu_graph_event *e;

	if (!is_target(pid_tgid))
		return 0;
	graph_tokens_exit(GRAPH_LEVEL_CPU, ret);
	start = bpf_map_lookup_elem(&cpu_graph_start_by_tid, &tid);
	if (!start)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		bpf_map_delete_elem(&cpu_graph_start_by_tid, &tid);
		return 0;
	}
	e->header.kind = EVENT_CPU_GRAPH;
	e->header.tid = tid;
	e->header.start_ns = start->start_ns;
	e->header.end_ns = bpf_ktime_get_ns();
	e->cgraph = start->cgraph;
	e->n_nodes = start->n_nodes;
	e->ret = (__s32)ret;
	bpf_map_delete_elem(&cpu_graph_start_by_tid, &tid);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
