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
	__s32 n_tokens; /* llama_batch.n_tokens: 1 is a decode step, more is prefill */
	__s32 ret;      /* llama_decode's return value: 0 ok, 1 no KV slot, <0 error */
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

/*
 * Read-only configuration the loader writes into .rodata before load (the only variable there, so it
 * sits at offset 0); the verifier then treats every field as a constant.
 */
struct probe_config {
	__u32 target_tgid;           /* only this process's threads are recorded; 0 = any */
	__u32 cgraph_n_nodes_offset; /* offset of `int n_nodes` in struct ggml_cgraph */
};

#endif /* INFERTOP_EVENTS_H */
