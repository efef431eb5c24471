/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every layer's programs share: the loader's configuration, the record ring and its lost count, the
 * target filter. Included first by infertop.bpf.c.
 */
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
