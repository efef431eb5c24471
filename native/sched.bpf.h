/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sched layer: thread states and interference, from the sched_switch and sched_wakeup tracepoints (tp_btf,
 * CO-RE). Included at the end of infertop.bpf.c.
 *
 * sched_switch fires machine-wide on every context switch, so the handler does as little as it can:
 *  - every CPU keeps its own short history of who ran on it (written only by that CPU, from its own switches),
 *    but only while some target thread is waiting for a CPU (`waiting` > 0);
 *  - a target thread switched out is remembered (when, which CPU, preempted or asleep); a wake-up starts
 *    its wait for a CPU;
 *  - when it is switched back in, one record covers its time off the CPU, and the CPU's history says who
 *    ran there while it waited, summed per task: a few culprit records. User space joins the rest.
 */
#include <bpf/bpf_core_read.h>

/* Only the task_struct fields read here; CO-RE relocates them against the running kernel. */
struct task_struct {
	int pid;
	int tgid;
	char comm[16];
	unsigned int __state;
} __attribute__((preserve_access_index));

/* Before Linux 5.14 the state field was `volatile long state`. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

struct sched_thread {
	__u64 on_ns;          /* last switch-in, 0 before the first one seen */
	__u64 off_ns;         /* last switch-out, 0 while on a CPU */
	__u64 wake_ns;        /* wake-up after the last switch-out, 0 if none */
	__u64 wait_since_ns;  /* start of the current wait for a CPU, 0 when not waiting */
	__u64 ran_ns;         /* time on the CPU before the last switch-out */
	__u32 cpu_out;
	__u32 preempted;
	__u32 counted;        /* counted in `waiting` */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct sched_thread);
} sched_thread_by_tid SEC(".maps");

/* Target threads waiting for a CPU right now (slot 0): while 0, CPUs keep no history. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} sched_waiting SEC(".maps");

/*
 * When the layer was last switched on (slot 0, bpf_ktime_get_ns() clock, written by user space before it
 * attaches, with `sched_waiting` reset to 0): state older than that is from before a pause and is ignored.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sched_epoch SEC(".maps");

static __always_inline __u64 sched_epoch_ns(void)
{
	__u32 zero = 0;
	__u64 *epoch = bpf_map_lookup_elem(&sched_epoch, &zero);

	return epoch ? *epoch : 0;
}

/* Handler invocations (switches and wake-ups seen machine-wide): the layer's cost, shown in the views. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sched_hits SEC(".maps");

#define SCHED_HISTORY 64 /* runs kept per CPU (power of two); a wait longer than that many switches is cut short */
#define SCHED_CULPRITS 8 /* distinct culprits reported per wait; more are left out */

struct sched_run {
	__u64 start_ns;
	__u64 end_ns;
	__u32 pid;
	__u32 tgid;
	char comm[SCHED_COMM_BYTES];
};

struct sched_cpu {
	__u64 run_start_ns; /* when the task now running on this CPU was switched in */
	__u32 head;         /* runs[head % SCHED_HISTORY] is the next slot */
	__u32 pad;
	struct sched_run runs[SCHED_HISTORY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_cpu);
} sched_cpu SEC(".maps");

struct sched_culprit_sum {
	__u64 ns;
	__u32 pid;
	__u32 tgid;
	char comm[SCHED_COMM_BYTES];
};

static __always_inline int sched_is_target(int tgid)
{
	return config.target_tgid != 0 && (__u32)tgid == config.target_tgid;
}

static __always_inline __s64 *sched_waiting_count(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sched_waiting, &zero);
}

static __always_inline void sched_count_hit(void)
{
	__u32 zero = 0;
	__u64 *hits = bpf_map_lookup_elem(&sched_hits, &zero);

	if (hits)
		*hits += 1;
}

#define SCHED_TASK_DEAD 0x80 /* TASK_DEAD in include/linux/sched.h: the task's last switch-out */

static __always_inline long sched_task_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return BPF_CORE_READ(task, __state);
	struct task_struct___pre514 *old = (void *)task;

	return BPF_CORE_READ(old, state);
}

struct sched_walk {
	struct sched_culprit_sum sums[SCHED_CULPRITS];
	__u64 from_ns;
	__u64 to_ns;
	__u32 head;
	__u32 pad;
};

/* One run of this CPU's history, newest first (bpf_loop callback): adds its overlap with the wait. */
static long sched_walk_run(__u32 i, void *data)
{
	struct sched_walk *walk = data;
	__u32 zero = 0;
	struct sched_cpu *cpu_state = bpf_map_lookup_elem(&sched_cpu, &zero); /* this CPU's, as the caller's */
	struct sched_run *run;
	__u64 start, end;

	if (!cpu_state)
		return 1;
	run = &cpu_state->runs[(walk->head - 1 - i) & (SCHED_HISTORY - 1)];
	if (run->end_ns <= walk->from_ns)
		return 1; /* newest first: the rest ended before the wait began */
	start = run->start_ns > walk->from_ns ? run->start_ns : walk->from_ns;
	end = run->end_ns < walk->to_ns ? run->end_ns : walk->to_ns;
	if (end <= start)
		return 0;
	for (int j = 0; j < SCHED_CULPRITS; j++) {
		struct sched_culprit_sum *sum = &walk->sums[j];

		if (sum->ns == 0 || sum->pid == run->pid) {
			if (sum->ns == 0) {
				sum->pid = run->pid;
				sum->tgid = run->tgid;
				__builtin_memcpy(sum->comm, run->comm, SCHED_COMM_BYTES);
			}
			sum->ns += end - start;
			break;
		}
	}
	return 0;
}

/* Sums the overlap of this CPU's recent runs with [from_ns, to_ns] per task, then reports each task. */
static __always_inline void sched_report_culprits(struct sched_cpu *cpu_state, __u32 tid, __u64 from_ns,
						  __u64 to_ns, __u32 cpu)
{
	struct sched_walk walk = { .from_ns = from_ns, .to_ns = to_ns, .head = cpu_state->head };

	bpf_loop(SCHED_HISTORY, sched_walk_run, &walk, 0);
	for (int j = 0; j < SCHED_CULPRITS; j++) {
		struct sched_culprit_event *e;

		if (walk.sums[j].ns == 0)
			break;
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (!e) {
			count_lost();
			return;
		}
		e->header.kind = EVENT_SCHED_CULPRIT;
		e->header.tid = tid;
		e->header.start_ns = from_ns;
		e->header.end_ns = to_ns;
		e->ns = walk.sums[j].ns;
		e->pid = walk.sums[j].pid;
		e->tgid = walk.sums[j].tgid;
		e->cpu = cpu;
		e->pad = 0;
		__builtin_memcpy(e->comm, walk.sums[j].comm, SCHED_COMM_BYTES);
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	}
}

static __always_inline void sched_thread_in(struct sched_cpu *cpu_state, __s64 *waiting, __u32 tid, __u64 now,
					    __u32 cpu)
{
	struct sched_thread *thread = bpf_map_lookup_elem(&sched_thread_by_tid, &tid);
	struct sched_off_event *e;

	if (!thread) {
		struct sched_thread fresh = { .on_ns = now };

		bpf_map_update_elem(&sched_thread_by_tid, &tid, &fresh, BPF_ANY);
		return;
	}
	if (thread->off_ns && thread->off_ns < sched_epoch_ns()) {
		thread->off_ns = 0; /* left the CPU before the layer was last switched on: not counted anywhere */
		thread->counted = 0;
	}
	if (thread->counted) {
		if (waiting)
			__sync_fetch_and_add(waiting, -1);
		thread->counted = 0;
	}
	if (thread->off_ns) {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			e->header.kind = EVENT_SCHED_OFF;
			e->header.tid = tid;
			e->header.start_ns = thread->off_ns;
			e->header.end_ns = now;
			e->wake_ns = thread->wake_ns;
			e->ran_ns = thread->ran_ns;
			e->cpu_out = thread->cpu_out;
			e->cpu_in = cpu;
			e->preempted = thread->preempted;
			e->pad = 0;
			bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		} else {
			count_lost();
		}
		if (thread->wait_since_ns && cpu_state)
			sched_report_culprits(cpu_state, tid, thread->wait_since_ns, now, cpu);
	}
	thread->on_ns = now;
	thread->off_ns = 0;
	thread->wake_ns = 0;
	thread->wait_since_ns = 0;
}

static __always_inline void sched_thread_out(__s64 *waiting, __u32 tid, __u64 now, __u32 cpu, int runnable)
{
	struct sched_thread *thread = bpf_map_lookup_elem(&sched_thread_by_tid, &tid);

	if (!thread)
		return; /* never seen switched in: its time on the CPU is unknown */
	thread->ran_ns = thread->on_ns && thread->on_ns >= sched_epoch_ns() ? now - thread->on_ns : 0;
	thread->off_ns = now;
	thread->wake_ns = 0;
	thread->cpu_out = cpu;
	thread->preempted = runnable;
	thread->wait_since_ns = runnable ? now : 0;
	if (runnable && !thread->counted && waiting) {
		__sync_fetch_and_add(waiting, 1);
		thread->counted = 1;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0;
	struct sched_cpu *cpu_state = bpf_map_lookup_elem(&sched_cpu, &zero);
	__s64 *waiting = sched_waiting_count();
	int prev_target = sched_is_target(BPF_CORE_READ(prev, tgid));
	int next_target = sched_is_target(BPF_CORE_READ(next, tgid));
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();

	sched_count_hit();
	if (!cpu_state)
		return 0;
	/* Keep the run that ends now while some target thread waits for a CPU (idle, pid 0, is no culprit). */
	if (waiting && *waiting > 0) {
		int pid = BPF_CORE_READ(prev, pid);

		if (pid != 0 && cpu_state->run_start_ns) {
			struct sched_run *run = &cpu_state->runs[cpu_state->head & (SCHED_HISTORY - 1)];

			run->start_ns = cpu_state->run_start_ns;
			run->end_ns = now;
			run->pid = pid;
			run->tgid = BPF_CORE_READ(prev, tgid);
			BPF_CORE_READ_STR_INTO(&run->comm, prev, comm);
			cpu_state->head += 1;
		}
	}
	cpu_state->run_start_ns = now;
	if (prev_target) {
		long state = sched_task_state(prev);
		__u32 tid = BPF_CORE_READ(prev, pid);

		/* Runnable: preempted, or still TASK_RUNNING (0). A dead thread's entry goes (the map is bounded). */
		if (state & SCHED_TASK_DEAD)
			bpf_map_delete_elem(&sched_thread_by_tid, &tid);
		else
			sched_thread_out(waiting, tid, now, cpu, preempt || (state & 0xff) == 0);
	}
	if (next_target)
		sched_thread_in(cpu_state, waiting, BPF_CORE_READ(next, pid), now, cpu);
	return 0;
}

static __always_inline int sched_on_wakeup(struct task_struct *p)
{
	struct sched_thread *thread;
	__s64 *waiting;
	__u32 tid;

	sched_count_hit();
	if (!sched_is_target(BPF_CORE_READ(p, tgid)))
		return 0;
	tid = BPF_CORE_READ(p, pid);
	thread = bpf_map_lookup_elem(&sched_thread_by_tid, &tid);
	if (!thread || !thread->off_ns || thread->wait_since_ns || thread->off_ns < sched_epoch_ns())
		return 0; /* on a CPU, already waiting for one, or off since before the layer was switched on */
	thread->wake_ns = bpf_ktime_get_ns();
	thread->wait_since_ns = thread->wake_ns;
	waiting = sched_waiting_count();
	if (!thread->counted && waiting) {
		__sync_fetch_and_add(waiting, 1);
		thread->counted = 1;
	}
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_sched_wakeup, struct task_struct *p)
{
	return sched_on_wakeup(p);
}
