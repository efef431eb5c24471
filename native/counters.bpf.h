/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Counters layer: perf counters opened per CPU by user space (perf_event_open, one fd per CPU per event, in
 * `counter_events` at cpu * MAX_COUNTER_EVENTS + e), read here where the operator layer already stops: a
 * worker thread's start on a graph and its arrival at the barrier after each node group. The difference
 * between two readings is what the thread's CPU counted over that stretch; it is the thread's own only when
 * the thread stayed on that CPU and nothing else ran there, so a CPU change marks the group instead.
 *
 * Included at the end of infertop.bpf.c: it uses that file's thread slots, ring buffer and count_lost.
 * Every entry point returns at once while the layer is off (one array lookup).
 */
#ifndef INFERTOP_COUNTERS_BPF_H
#define INFERTOP_COUNTERS_BPF_H

#include <bpf/bpf_core_read.h>

/* The two fields read of the kernel's task_struct, relocated against the running kernel's BTF (CO-RE). */
struct task_struct___infertop {
	unsigned long nvcsw;
	unsigned long nivcsw;
} __attribute__((preserve_access_index));

/* Context switches of the current thread so far: a rise between two readings means it was switched out. */
static __always_inline __u64 current_switches(void)
{
	struct task_struct___infertop *task = (void *)bpf_get_current_task();

	return BPF_CORE_READ(task, nvcsw) + BPF_CORE_READ(task, nivcsw);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, MAX_COUNTER_CPUS * MAX_COUNTER_EVENTS);
	__type(key, __u32);
	__type(value, __u32);
} counter_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct counter_control);
} counter_control SEC(".maps");

/* A thread's last reading: the baseline of its next group. */
struct counter_reading {
	__u64 counter[MAX_COUNTER_EVENTS];
	__u64 enabled[MAX_COUNTER_EVENTS];
	__u64 running[MAX_COUNTER_EVENTS];
	__u64 switches; /* the thread's context switches at this reading */
	__u32 cpu;
	__u32 failed; /* reads refused in this reading */
	__u32 active; /* a graph is being counted on this thread (kept last: not copied between readings) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct counter_reading);
} counter_last_by_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_THREAD_SLOTS);
	__type(key, __u32);
	__type(value, struct counters_event);
} counters_by_slot SEC(".maps");

static __always_inline struct counter_control *counters_on(void)
{
	__u32 zero = 0;
	struct counter_control *ctl = bpf_map_lookup_elem(&counter_control, &zero);

	return ctl && ctl->enabled ? ctl : 0;
}

/* Reads this CPU's events into `now`; returns how many reads failed. */
static __always_inline __u32 counters_read(__u32 cpu, __u32 n_events, struct counter_reading *now)
{
	struct bpf_perf_event_value value;
	__u32 failed = 0;

#pragma unroll
	for (int e = 0; e < MAX_COUNTER_EVENTS; e++) {
		if (e >= n_events)
			continue;
		if (bpf_perf_event_read_value(&counter_events, (__u64)cpu * MAX_COUNTER_EVENTS + e, &value,
					      sizeof(value))) {
			failed++;
			value.counter = value.enabled = value.running = 0;
		}
		now->counter[e] = value.counter;
		now->enabled[e] = value.enabled;
		now->running[e] = value.running;
	}
	now->switches = current_switches();
	now->cpu = cpu;
	now->failed = failed;
	return failed;
}

/* A worker thread starts on a graph the operator layer traces (its arrivals slot is `a`): take a baseline. */
/* Returns ARRIVAL_READ_COUNTERS when the counters are read at this thread's arrivals, else 0. */
static __always_inline __u32 counters_thread_start(struct arrivals_event *a)
{
	struct counter_control *ctl = counters_on();
	struct counter_reading *last;
	struct counters_event *c;
	__u32 tid = a->header.tid;
	__u32 *slot;

	if (!ctl)
		return 0;
	slot = bpf_map_lookup_elem(&thread_slot, &tid);
	if (!slot)
		return 0;
	c = bpf_map_lookup_elem(&counters_by_slot, slot);
	last = bpf_map_lookup_elem(&counter_last_by_slot, slot);
	if (!c || !last)
		return 0;
	c->header.kind = EVENT_COUNTERS;
	c->header.tid = tid;
	c->header.start_ns = a->header.start_ns;
	c->header.end_ns = 0;
	c->graph_seq = a->graph_seq;
	c->count = 0;
	c->n_events = ctl->n_events < MAX_COUNTER_EVENTS ? ctl->n_events : MAX_COUNTER_EVENTS;
	c->migrated = 0;
	c->switched = 0;
	__builtin_memset(c->switched_bits, 0, sizeof(c->switched_bits));
	__builtin_memset(c->enabled, 0, sizeof(c->enabled));
	__builtin_memset(c->running, 0, sizeof(c->running));
	__builtin_memset(c->migrated_bits, 0, sizeof(c->migrated_bits));
	c->failed = counters_read(bpf_get_smp_processor_id(), c->n_events, last);
	last->active = 1;
	return ARRIVAL_READ_COUNTERS;
}

/* The thread reached the barrier after node group `index` (0-based): the group's deltas. */
static __always_inline void counters_node_done(__u32 tid, __u32 index)
{
	struct counter_reading now = {};
	struct counter_reading *last;
	struct counters_event *c;
	__u32 *slot, cpu, row;

	if (!counters_on())
		return;
	slot = bpf_map_lookup_elem(&thread_slot, &tid);
	if (!slot)
		return;
	c = bpf_map_lookup_elem(&counters_by_slot, slot);
	last = bpf_map_lookup_elem(&counter_last_by_slot, slot);
	if (!c || !last || !last->active || index >= MAX_COUNTER_GROUPS)
		return;
	row = index & (MAX_COUNTER_GROUPS - 1);
	cpu = bpf_get_smp_processor_id();
	c->failed += counters_read(cpu, c->n_events, &now);
	if (cpu != last->cpu || now.failed || last->failed) {
		/* Two CPUs' counters, or a reading missing: no deltas for this group. */
		c->migrated_bits[(row / 32) & (MAX_COUNTER_GROUPS / 32 - 1)] |= 1u << (row % 32);
		c->migrated++;
		__builtin_memset(c->delta[row], 0, sizeof(c->delta[row]));
	} else {
		if (now.switches != last->switches) {
			c->switched_bits[(row / 32) & (MAX_COUNTER_GROUPS / 32 - 1)] |= 1u << (row % 32);
			c->switched++;
		}
#pragma unroll
		for (int e = 0; e < MAX_COUNTER_EVENTS; e++) {
			c->delta[row][e] = now.counter[e] - last->counter[e];
			c->enabled[e] += now.enabled[e] - last->enabled[e];
			c->running[e] += now.running[e] - last->running[e];
		}
	}
	__builtin_memcpy(last, &now, __builtin_offsetof(struct counter_reading, active));
	c->count = index + 1;
}

/* The thread's arrivals for a graph go to user space: its counter deltas follow them. */
static __always_inline void counters_send(__u32 tid)
{
	struct counter_reading *last;
	struct counters_event *c;
	__u32 *slot, count;
	__u64 size;

	slot = bpf_map_lookup_elem(&thread_slot, &tid);
	if (!slot)
		return;
	c = bpf_map_lookup_elem(&counters_by_slot, slot);
	last = bpf_map_lookup_elem(&counter_last_by_slot, slot);
	if (!c || !last || !last->active)
		return;
	last->active = 0;
	count = c->count < MAX_COUNTER_GROUPS ? c->count : MAX_COUNTER_GROUPS;
	size = __builtin_offsetof(struct counters_event, delta) +
	       (__u64)(count & (MAX_COUNTER_GROUPS - 1)) * sizeof(c->delta[0]);
	if (count == MAX_COUNTER_GROUPS)
		size = sizeof(*c);
	if (bpf_ringbuf_output(&events, c, size, BPF_RB_NO_WAKEUP))
		count_lost();
}

#endif /* INFERTOP_COUNTERS_BPF_H */
