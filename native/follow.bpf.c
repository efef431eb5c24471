// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The launched tree's exec hold: `infertop -- LAUNCHER ...` (a script, sh -c, chroot, unshare, a container
 * runtime) traces the process LAUNCHER starts that runs GGML code, from its first graph on. Its own small
 * object, loaded before infertop.bpf.c's (which is loaded for the one process it traces).
 *
 *  - sched_process_fork / sched_process_exit keep `tree`: the launched process and every process it starts,
 *    whatever namespaces they enter (a new PID namespace renumbers them inside, not here).
 *  - sched_process_exec, for a process of `tree` whose new image is not a known launcher (`launchers`: device
 *    and inode of images already seen to run no GGML code): the process is stopped (SIGSTOP, before its first
 *    instruction) and user space told (`held`). User space resumes it at once, or after it put a uprobe on the
 *    image's entry point (`handle_entry_hold`), which stops it again once the dynamic loader has mapped its whole
 *    DT_NEEDED closure, in its own root, before main: there its maps say whether it is an engine.
 * A record that does not fit in `held` is counted (`unheld`) and the process is not stopped: it is never left
 * stopped with no one to resume it.
 */
#include <linux/bpf.h>
#include "regs.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SIGSTOP 19
#define TREE_MAX 16384

enum hold_kind {
	HOLD_EXEC = 1,  /* stopped at exec: the new image, not yet its libraries */
	HOLD_ENTRY = 2, /* stopped at the image's entry point: its DT_NEEDED closure mapped */
};

struct hold_event {
	__u32 tgid;
	__u32 kind;
	__u64 start_boottime_ns; /* with tgid, names the process (a pid may be reused) */
	__u64 image_dev;         /* the kernel's dev_t of the new image (HOLD_EXEC) */
	__u64 image_ino;
};

struct image_key {
	__u64 dev;
	__u64 ino;
};

/* Only the fields read here; CO-RE relocates them against the running kernel. */
struct super_block {
	__u32 s_dev;
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct inode *f_inode;
} __attribute__((preserve_access_index));

struct linux_binprm {
	struct file *file;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	__u64 start_boottime;
} __attribute__((preserve_access_index));

/* Set before load: the launched process (the launcher, waiting at its start gate). */
const volatile __u32 launched_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TREE_MAX);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} tree SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct image_key);
	__type(value, __u8);
} launchers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} held SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} unheld SEC(".maps");

static __always_inline int in_tree(__u32 tgid)
{
	return tgid == launched_tgid || bpf_map_lookup_elem(&tree, &tgid) != NULL;
}

static __always_inline void hold(__u32 tgid, __u64 start_ns, __u32 kind, __u64 dev, __u64 ino)
{
	struct hold_event *e = bpf_ringbuf_reserve(&held, sizeof(*e), 0);
	__u32 zero = 0;
	__u64 *missed;

	if (!e) {
		missed = bpf_map_lookup_elem(&unheld, &zero);
		if (missed)
			__sync_fetch_and_add(missed, 1);
		return;
	}
	e->tgid = tgid;
	e->kind = kind;
	e->start_boottime_ns = start_ns;
	e->image_dev = dev;
	e->image_ino = ino;
	bpf_send_signal(SIGSTOP); /* delivered on the way back to user space: before the image's first instruction */
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_tree_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = BPF_CORE_READ(parent, tgid);
	__u32 child_tgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (child_tgid == parent_tgid || !in_tree(parent_tgid))
		return 0; /* a thread, or not ours */
	bpf_map_update_elem(&tree, &child_tgid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_tree_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (BPF_CORE_READ(p, pid) == (int)tgid)
		bpf_map_delete_elem(&tree, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec_hold, struct task_struct *p, int old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct image_key key = {};

	if (!in_tree(tgid))
		return 0;
	key.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	key.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
	if (bpf_map_lookup_elem(&launchers, &key))
		return 0; /* seen before: runs no GGML code (sed, grep, the shell itself) */
	hold(tgid, BPF_CORE_READ(p, start_boottime), HOLD_EXEC, key.dev, key.ino);
	return 0;
}

/* Attached by user space to one held process's image, at its entry point, for that process only. */
SEC("uprobe")
int handle_entry_hold(struct pt_regs *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);

	if (!in_tree(tgid))
		return 0;
	hold(tgid, BPF_CORE_READ(task, start_boottime), HOLD_ENTRY, 0, 0);
	return 0;
}
