/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Offload: what the graph layer's compute spans cannot tell for a device backend.
 *
 * ggml_backend_graph_compute_async returns once a device backend has its work queued (CUDA's graph launch,
 * Vulkan's submits, OpenCL's enqueues); the work ends at the next ggml_backend_synchronize of that backend
 * (the scheduler's, before it copies inputs or reuses buffers, and ggml_backend_sched_synchronize's, which a
 * program calls before it reads results). So each synchronize is recorded with the backend it waited for, and
 * user space closes a backend's open computes at its return: device-complete time, next to enqueue time.
 * The scheduler's blocking input copies (ggml_backend_tensor_copy) and async ones are recorded with the source
 * tensor's shape and both names: what crossed between backends, and what it cost the host.
 * All optional probes of the graph layer; a few records per graph split.
 * Included at the end of infertop.bpf.c: uses its maps and helpers (events, is_target(), count_lost()).
 */
#ifndef INFERTOP_OFFLOAD_BPF_H
#define INFERTOP_OFFLOAD_BPF_H

/* The record being filled between a call's entry and its return, per thread and per kind of call. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct offload_event);
} offload_sync_by_tid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct offload_event);
} offload_copy_by_tid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct offload_event);
} offload_dispatch_by_tid SEC(".maps");

/* A zeroed record to start from: too large for the BPF stack, so one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offload_event);
} offload_scratch SEC(".maps");

static __always_inline struct offload_event *offload_begin(__u64 pid_tgid, __u32 what)
{
	__u32 zero = 0;
	struct offload_event *e = bpf_map_lookup_elem(&offload_scratch, &zero);

	if (!e)
		return 0;
	__builtin_memset(e, 0, sizeof(*e));
	e->header.kind = EVENT_OFFLOAD;
	e->header.tid = (__u32)pid_tgid;
	e->what = what;
	return e;
}

static __always_inline void offload_read_backend(struct offload_event *e, void *backend)
{
	void *guid_ptr = 0;

	e->backend = (__u64)backend;
	if (backend && !bpf_probe_read_user(&guid_ptr, sizeof(guid_ptr), backend) && guid_ptr)
		bpf_probe_read_user(e->guid, sizeof(e->guid), guid_ptr);
}

static __always_inline void offload_read_tensors(struct offload_event *e, const void *src, const void *dst)
{
	__u64 nb3 = 0;

	if (src) {
		bpf_probe_read_user(&e->type, sizeof(e->type), src + config.tensor_type_offset);
		bpf_probe_read_user(e->ne, sizeof(e->ne), src + config.tensor_ne_offset);
		/* nb[4] follows ne[4] in every ggml release */
		if (!bpf_probe_read_user(&nb3, sizeof(nb3), src + config.tensor_ne_offset + 7 * 8) && e->ne[3] > 0)
			e->bytes = nb3 * (__u64)e->ne[3];
		bpf_probe_read_user_str(e->src_name, sizeof(e->src_name), src + config.tensor_name_offset);
	}
	if (dst)
		bpf_probe_read_user_str(e->dst_name, sizeof(e->dst_name), dst + config.tensor_name_offset);
}

static __always_inline void offload_store(void *map, __u64 pid_tgid, struct offload_event *e)
{
	__u32 tid = (__u32)pid_tgid;

	e->header.start_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(map, &tid, e, BPF_ANY);
}

static __always_inline void offload_finish(void *map, __u64 pid_tgid)
{
	__u32 tid = (__u32)pid_tgid;
	struct offload_event *e = bpf_map_lookup_elem(map, &tid);

	if (!e)
		return;
	e->header.end_ns = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&events, e, sizeof(*e), BPF_RB_NO_WAKEUP))
		count_lost();
	bpf_map_delete_elem(map, &tid);
}

/* void ggml_backend_synchronize(ggml_backend_t backend) */
SEC("uprobe")
int BPF_KPROBE(handle_sync_enter, void *backend)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct offload_event *e;

	if (!is_target(pid_tgid) || !(e = offload_begin(pid_tgid, OFFLOAD_SYNC)))
		return 0;
	offload_read_backend(e, backend);
	offload_store(&offload_sync_by_tid, pid_tgid, e);
	return 0;
}

/* void ggml_backend_event_synchronize(ggml_backend_event_t event): the event names a device, not a backend. */
SEC("uprobe")
int BPF_KPROBE(handle_event_sync_enter, void *event)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct offload_event *e;

	if (!is_target(pid_tgid) || !(e = offload_begin(pid_tgid, OFFLOAD_EVENT_SYNC)))
		return 0;
	offload_store(&offload_sync_by_tid, pid_tgid, e);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_sync_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (is_target(pid_tgid)) {
		offload_finish(&offload_sync_by_tid, pid_tgid);
		moe_on_sync((__u32)pid_tgid);
	}
	return 0;
}

/* void ggml_backend_tensor_copy(struct ggml_tensor *src, struct ggml_tensor *dst) */
SEC("uprobe")
int BPF_KPROBE(handle_copy_enter, const void *src, const void *dst)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct offload_event *e;

	if (!is_target(pid_tgid) || !(e = offload_begin(pid_tgid, OFFLOAD_COPY)))
		return 0;
	offload_read_tensors(e, src, dst);
	offload_store(&offload_copy_by_tid, pid_tgid, e);
	return 0;
}

/* void ggml_backend_tensor_copy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, src, dst) */
SEC("uprobe")
int BPF_KPROBE(handle_copy_async_enter, void *backend_src, void *backend_dst, const void *src, const void *dst)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct offload_event *e;

	if (!is_target(pid_tgid) || !(e = offload_begin(pid_tgid, OFFLOAD_COPY_ASYNC)))
		return 0;
	offload_read_backend(e, backend_dst);
	offload_read_tensors(e, src, dst);
	offload_store(&offload_copy_by_tid, pid_tgid, e);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_copy_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (is_target(pid_tgid))
		offload_finish(&offload_copy_by_tid, pid_tgid);
	return 0;
}

/*
 * bool ggml_backend_<vk|cuda>_cpy_tensor_async(backend_src, backend_dst, src, dst): the scheduler calls a device
 * backend's own async copy through its interface (no exported function on the way); entered with
 * handle_copy_async_enter. It returns false when it cannot copy: the scheduler then copies with
 * ggml_backend_tensor_copy, recorded there, so this record is dropped.
 */
SEC("uretprobe")
int BPF_KRETPROBE(handle_copy_iface_exit, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;

	if (!is_target(pid_tgid))
		return 0;
	if (!(ret & 0xff)) {
		bpf_map_delete_elem(&offload_copy_by_tid, &tid);
		return 0;
	}
	offload_finish(&offload_copy_by_tid, pid_tgid);
	return 0;
}

/*
 * The Vulkan backend's own dispatch, per batch of recorded nodes (static functions of libggml-vulkan, in its
 * .symtab): ggml_vk_submit(vk_context &, vk::Fence) hands a batch to the queue, ggml_vk_wait_for_fence(ctx)
 * waits for it (in a compute call, or in its synchronize). Host time, never device time. (The loader's exported vkQueueSubmit is
 * not called: vulkan-hpp calls the driver's functions through pointers it looked up.)
 */
SEC("uprobe")
int BPF_KPROBE(handle_vk_submit_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct offload_event *e;

	if (!is_target(pid_tgid) || !(e = offload_begin(pid_tgid, OFFLOAD_VK_SUBMIT)))
		return 0;
	offload_store(&offload_dispatch_by_tid, pid_tgid, e);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(handle_vk_fence_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct offload_event *e;

	if (!is_target(pid_tgid) || !(e = offload_begin(pid_tgid, OFFLOAD_VK_FENCE)))
		return 0;
	offload_store(&offload_dispatch_by_tid, pid_tgid, e);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_dispatch_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (is_target(pid_tgid))
		offload_finish(&offload_dispatch_by_tid, pid_tgid);
	return 0;
}

#endif /* INFERTOP_OFFLOAD_BPF_H */
