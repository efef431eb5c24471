// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * infertop's probes on an unmodified llama.cpp / GGML process.
 *
 * Token layer: llama_decode entry/exit.  Graph layer: ggml_backend_graph_compute_async (every backend) and
 * ggml_graph_compute (the CPU backend).  Each entry probe stores what it needs in a per-thread map; the
 * return probe completes one fixed-size record in the `events` ring buffer.  Records are written without a
 * wake-up: the reader drains on its own clock, so a busy engine pays no extra wake-ups.
 */
#include <linux/bpf.h>
#include "regs.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load; read-only afterwards, so the verifier folds it. */
const volatile struct probe_config config = {
	.target_tgid = 0,
	.cgraph_n_nodes_offset = 4,
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by the loader (--ring-kib) */
} events SEC(".maps");

/* Records that did not fit in `events`: reported as lost_events, never silently dropped. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost_events SEC(".maps");

struct decode_start {
	__u64 start_ns;
	__u64 ctx;
	__s32 n_tokens;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct decode_start);
} decode_start_by_tid SEC(".maps");

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

static __always_inline int is_target(__u64 pid_tgid)
{
	return config.target_tgid == 0 || (__u32)(pid_tgid >> 32) == config.target_tgid;
}

static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *lost = bpf_map_lookup_elem(&lost_events, &zero);

	if (lost)
		*lost += 1;
}

static __always_inline __s32 read_n_nodes(const void *cgraph)
{
	__s32 n_nodes = -1;

	if (!cgraph || bpf_probe_read_user(&n_nodes, sizeof(n_nodes), cgraph + config.cgraph_n_nodes_offset))
		return -1;
	return n_nodes;
}

/*
 * int32_t llama_decode(struct llama_context *ctx, struct llama_batch batch)
 * llama_batch is 56 bytes and passed by value.  x86-64 SysV passes it in memory, just above the return
 * address; AAPCS64 passes a pointer to a copy in x1.  n_tokens is its first field.
 */
SEC("uprobe")
int BPF_KPROBE(handle_decode_enter, void *llama_ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct decode_start start = {};
	const void *batch;

	if (!is_target(pid_tgid))
		return 0;
#if defined(__TARGET_ARCH_x86)
	batch = (const void *)(PT_REGS_SP(ctx) + 8);
#else
	batch = (const void *)PT_REGS_PARM2(ctx);
#endif
	start.ctx = (__u64)llama_ctx;
	if (bpf_probe_read_user(&start.n_tokens, sizeof(start.n_tokens), batch))
		start.n_tokens = -1;
	start.start_ns = bpf_ktime_get_ns();
	__u32 tid = (__u32)pid_tgid;
	bpf_map_update_elem(&decode_start_by_tid, &tid, &start, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_decode_exit, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct decode_start *start;
	struct decode_event *e;

	if (!is_target(pid_tgid))
		return 0;
	start = bpf_map_lookup_elem(&decode_start_by_tid, &tid);
	if (!start)
		return 0; /* attached mid-call */
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		bpf_map_delete_elem(&decode_start_by_tid, &tid);
		return 0;
	}
	e->header.kind = EVENT_DECODE;
	e->header.tid = tid;
	e->header.start_ns = start->start_ns;
	e->header.end_ns = bpf_ktime_get_ns();
	e->ctx = start->ctx;
	e->n_tokens = start->n_tokens;
	e->ret = (__s32)ret;
	bpf_map_delete_elem(&decode_start_by_tid, &tid);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

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
