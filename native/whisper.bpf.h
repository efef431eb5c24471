/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Token layer, whisper.cpp's own API: one record per transcription call, for whisper's units (audio seconds and
 * the real-time factor; its encoder passes and decoder tokens come from its graphs, graph_tokens.bpf.h).
 *
 * whisper_full_with_state(ctx, state, params, samples, n_samples) is exported, and whisper_full calls it through
 * the PLT; it calls the exported whisper_pcm_to_mel_with_state(ctx, state, samples, n_samples, n_threads) first,
 * through the PLT too. The samples are read there: all five of its arguments are scalars (whisper_full_with_state
 * takes its params struct by value, which moves n_samples to another register on aarch64 than on x86-64).
 * whisper_encode_internal and whisper_decode_internal are static and cannot be probed by name.
 * Included at the end of infertop.bpf.c: uses its maps and helpers (events, is_target(), count_lost()).
 */
#ifndef INFERTOP_WHISPER_BPF_H
#define INFERTOP_WHISPER_BPF_H

/* A whisper_full_with_state call in progress, by thread (whisper_full_parallel runs one per thread). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tid */
	__type(value, struct whisper_full_event);
} whisper_full_by_tid SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(handle_whisper_full_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct whisper_full_event e = {};

	if (!is_target(pid_tgid))
		return 0;
	e.header.kind = EVENT_WHISPER_FULL;
	e.header.tid = tid;
	e.header.start_ns = bpf_ktime_get_ns();
	e.n_samples = -1;
	bpf_map_update_elem(&whisper_full_by_tid, &tid, &e, BPF_ANY);
	return 0;
}

/* int whisper_pcm_to_mel_with_state(struct whisper_context *, struct whisper_state *, const float *, int, int) */
SEC("uprobe")
int BPF_KPROBE(handle_whisper_mel_enter, void *wctx, void *state, const void *samples, int n_samples)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct whisper_full_event *e;

	if (!is_target(pid_tgid))
		return 0;
	e = bpf_map_lookup_elem(&whisper_full_by_tid, &tid);
	if (e && n_samples >= 0)
		e->n_samples = n_samples;
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(handle_whisper_full_exit, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct whisper_full_event *e;

	if (!is_target(pid_tgid))
		return 0;
	e = bpf_map_lookup_elem(&whisper_full_by_tid, &tid);
	if (!e)
		return 0; /* attached while the call ran: its start and samples were not seen */
	e->header.end_ns = bpf_ktime_get_ns();
	e->ret = (__s32)ret;
	if (bpf_ringbuf_output(&events, e, sizeof(*e), BPF_RB_NO_WAKEUP))
		count_lost();
	bpf_map_delete_elem(&whisper_full_by_tid, &tid);
	return 0;
}

#endif /* INFERTOP_WHISPER_BPF_H */
