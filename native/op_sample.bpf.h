/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Operator layer, between its sample windows: a cpu-clock perf event per CPU (attached by user space, ~1 kHz)
 * runs this program on whatever that CPU is running. When it interrupts a target thread, one record says where
 * the thread was. The cost is one timer interrupt per CPU per period, whatever the target does: it does not
 * grow with nodes per second as the barrier probes do. Included by infertop.bpf.c after the operator layer.
 */

/* Kernel addresses are in the upper half on both architectures objects are built for. */
#define KERNEL_HALF (1ull << 63)

SEC("perf_event")
int handle_op_sample(struct bpf_perf_event_data_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct op_sample_event *e;
	__u64 ip;

	if (config.target_tgid == 0 || (__u32)(pid_tgid >> 32) != config.target_tgid)
		return 0;
	ip = PT_REGS_IP(&ctx->regs);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 0;
	}
	e->header.kind = EVENT_OP_SAMPLE;
	e->header.tid = (__u32)pid_tgid;
	e->header.start_ns = bpf_ktime_get_ns();
	e->header.end_ns = e->header.start_ns;
	e->ip = ip & KERNEL_HALF ? 0 : ip;
	e->cpu = bpf_get_smp_processor_id();
	e->pad = 0;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
