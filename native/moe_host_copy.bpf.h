/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * MoE layer, the experts' ids where no CPU MUL_MAT_ID reads them.
 *
 * Included from infertop.bpf.c after the MoE layer (moe.bpf.h: its maps, moe_layer_of) and before the offload
 * probes (offload.bpf.h), whose synchronize return calls moe_on_sync.
 */
#ifndef INFERTOP_MOE_HOST_COPY_BPF_H
#define INFERTOP_MOE_HOST_COPY_BPF_H

/*
 * Experts computed on a device with their weights in host memory (-ot exps=CPU, --cpu-moe, a batch the
 * scheduler offloads): before it copies only the experts used, ggml's scheduler reads the ids back from the
 * device, ggml_backend_tensor_get_async(ids_backend, ids, host_buffer, 0, nbytes), then
 * ggml_backend_synchronize(ids_backend). No CPU MUL_MAT_ID runs on them, so they are read from that host buffer
 * at the synchronize's return (the graph layer's probe calls moe_on_sync). The tensor is known by its name, as
 * the runtime's description gives it (config/runtimes.conf, moe-ids), its layer by its "-L" suffix.
 */
struct moe_host_copy {
	__u64 data;
	__u64 size;
	__s64 ne0;
	__s64 ne1;
	__u64 nb1;
	__s32 layer;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct moe_host_copy);
} moe_host_copy_by_tid SEC(".maps");

/* void ggml_backend_tensor_get_async(ggml_backend_t, const struct ggml_tensor *, void *data, size_t offset, size_t size) */
SEC("uprobe")
int BPF_KPROBE(handle_moe_get_async, void *backend, const void *tensor, void *data, __u64 offset, __u64 size)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, zero = 0, runtime = 0;
	struct moe_host_copy copy = {};
	struct node_name_bytes *name;
	__s32 type = -1;
	__s64 ne[2] = {};

	if (!is_target(pid_tgid) || !moe_enabled() || !tensor || !data || offset != 0 || size == 0)
		return 0;
	if (bpf_probe_read_user(&type, sizeof(type), tensor + config.tensor_type_offset) ||
	    (__u32)type != config.type_i32)
		return 0;
	if (graph_name_kind(tensor, &runtime) != GRAPH_NAME_MOE_IDS)
		return 0;
	name = bpf_map_lookup_elem(&moe_name_scratch, &zero);
	if (name && bpf_probe_read_user(name->bytes, sizeof(name->bytes), tensor + config.tensor_name_offset))
		name->bytes[0] = 0;
	copy.layer = name ? moe_layer_of(name) : -1;
	if (copy.layer < 0 ||
	    bpf_probe_read_user(ne, sizeof(ne), tensor + config.tensor_ne_offset) ||
	    bpf_probe_read_user(&copy.nb1, sizeof(copy.nb1), tensor + config.tensor_nb_offset + 8) ||
	    ne[0] <= 0 || ne[1] <= 0)
		return 0;
	copy.data = (__u64)data;
	copy.size = size;
	copy.ne0 = ne[0];
	copy.ne1 = ne[1];
	bpf_map_update_elem(&moe_host_copy_by_tid, &tid, &copy, BPF_ANY);
	return 0;
}

/* ggml_backend_synchronize returned on this thread: a host copy of ids it waited for is complete. */
static __always_inline void moe_on_sync(__u32 tid)
{
	struct moe_host_copy *copy = bpf_map_lookup_elem(&moe_host_copy_by_tid, &tid);
	struct moe_event *e;
	__u32 zero = 0;
	__u64 size;

	if (!copy)
		return;
	e = bpf_map_lookup_elem(&moe_scratch, &zero);
	if (!e) {
		bpf_map_delete_elem(&moe_host_copy_by_tid, &tid);
		return;
	}
	e->header.kind = EVENT_MOE;
	e->header.tid = tid;
	e->header.start_ns = bpf_ktime_get_ns();
	e->header.end_ns = 0;
	e->graph_seq = 0;
	e->signature = 0;
	e->subtype = MOE_IDS;
	e->group = MOE_GROUP_HOST_COPY;
	e->layer = copy->layer;
	e->ne0 = copy->ne0;
	e->ne1 = copy->ne1;
	e->nb1 = copy->nb1;
	e->failed = 0;
	size = copy->size;
	if (size > MOE_MAX_ID_BYTES)
		size = MOE_MAX_ID_BYTES;
	if (bpf_probe_read_user(e->ids, size, (const void *)copy->data)) {
		e->failed = 1;
		size = 0;
	}
	e->value = (__u32)size;
	bpf_map_delete_elem(&moe_host_copy_by_tid, &tid);
	moe_send(e, __builtin_offsetof(struct moe_event, ids) + size);
}

#endif /* INFERTOP_MOE_HOST_COPY_BPF_H */
